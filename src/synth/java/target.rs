//! The member a candidate mutates and the class around it: whether a generated class in its
//! package can reach it, through which members, and with which constructors.

use super::*;
use tree_sitter::Node;

/// One way to call into the mutated code.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) is_static: bool,
    pub(super) is_constructor: bool,
    pub(super) void: bool,
    pub(super) params: Vec<String>,
}

/// What the class around the mutated member offers.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) package: String,
    /// `Outer.Inner` as source refers to it.
    pub(super) class: String,
    pub(super) simple: String,
    pub(super) abstract_or_interface: bool,
    /// Parameter lists of the constructors callable from the package.
    pub(super) constructors: Vec<Vec<String>>,
    pub(super) entries: Vec<Entry>,
}

pub(super) fn modifiers(n: Node<'_>, src: &str) -> String {
    let mut c = n.walk();
    let m = n
        .children(&mut c)
        .find(|k| k.kind() == "modifiers")
        .map(|k| text(k, src).to_string())
        .unwrap_or_default();
    m
}

pub(super) fn has_word(modifiers: &str, w: &str) -> bool {
    modifiers
        .split(|c: char| !c.is_alphanumeric())
        .any(|x| x == w)
}

pub(super) fn params(n: Node<'_>, src: &str) -> Option<Vec<String>> {
    let p = n.child_by_field_name("parameters")?;
    let mut out = Vec::new();
    let mut c = p.walk();
    for f in p.named_children(&mut c) {
        match f.kind() {
            "formal_parameter" => out.push(text(f.child_by_field_name("type")?, src).to_string()),
            "spread_parameter" => {
                let mut c2 = f.walk();
                let ty = f
                    .named_children(&mut c2)
                    .find(|k| k.kind() != "modifiers")?;
                out.push(format!("{}[]", text(ty, src)));
            }
            "receiver_parameter" => {}
            _ => {}
        }
    }
    Some(out)
}

/// The member on line `first` (1-based) of `src` and the class around it.
pub(super) fn target(src: &str, first: usize) -> Result<Target, String> {
    let mut parser = java_parser();
    let tree = parser.parse(src, None).ok_or("the file does not parse")?;
    let root = tree.root_node();
    let mut package = String::new();
    let mut c = root.walk();
    for k in root.children(&mut c) {
        if k.kind() == "package_declaration" {
            let mut c2 = k.walk();
            let name = k
                .named_children(&mut c2)
                .find(|x| matches!(x.kind(), "scoped_identifier" | "identifier"));
            if let Some(n) = name {
                package = text(n, src).to_string();
            }
        }
    }
    // The member declared on that line.
    let mut member = None;
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "method_declaration" | "constructor_declaration")
            && n.start_position().row < first
            && n.end_position().row + 1 >= first
            && member.is_none_or(|m: Node<'_>| n.start_byte() > m.start_byte())
        {
            member = Some(n);
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    let member = member.ok_or("no method or constructor there")?;
    // The classes around it: each must be a named class reachable from the package.
    let mut chain = Vec::new();
    let mut class_node = None;
    let mut inner: Option<Node<'_>> = None;
    let mut p = member.parent();
    while let Some(n) = p {
        match n.kind() {
            "class_declaration"
            | "enum_declaration"
            | "interface_declaration"
            | "record_declaration" => {
                let name = text(
                    n.child_by_field_name("name")
                        .ok_or("a class without a name")?,
                    src,
                );
                if has_word(&modifiers(n, src), "private") {
                    return Err(format!("`{name}` is private"));
                }
                // A class nested in this one must be static to be built from outside.
                if let Some(i) = inner {
                    if i.kind() == "class_declaration"
                        && n.kind() != "interface_declaration"
                        && !has_word(&modifiers(i, src), "static")
                    {
                        return Err("a member of an inner class".into());
                    }
                }
                chain.push(name.to_string());
                class_node.get_or_insert(n);
                inner = Some(n);
            }
            "object_creation_expression" => {
                return Err("a member of an anonymous class".into());
            }
            "block" | "lambda_expression" | "enum_constant" => {
                return Err("a member of a local class".into());
            }
            _ => {}
        }
        p = n.parent();
    }
    let class_node = class_node.ok_or("no class around the member")?;
    chain.reverse();
    let simple = chain.last().cloned().unwrap_or_default();
    let class_mods = modifiers(class_node, src);
    let abstract_or_interface = class_node.kind() == "interface_declaration"
        || has_word(&class_mods, "abstract")
        || class_node.kind() == "enum_declaration";
    let body = class_node
        .child_by_field_name("body")
        .ok_or("a class without a body")?;
    let mut constructors = Vec::new();
    let mut methods = Vec::new();
    let mut c = body.walk();
    for k in body.named_children(&mut c) {
        match k.kind() {
            "constructor_declaration" if !has_word(&modifiers(k, src), "private") => {
                if let Some(p) = params(k, src) {
                    constructors.push(p);
                }
            }
            "method_declaration" => methods.push(k),
            _ => {}
        }
    }
    let declares_constructor = {
        let mut c = body.walk();
        let found = body
            .named_children(&mut c)
            .any(|k| k.kind() == "constructor_declaration");
        found
    };
    if !declares_constructor && class_node.kind() == "class_declaration" {
        constructors.push(Vec::new());
    }
    let entry_of = |n: Node<'_>| -> Option<Entry> {
        let m = modifiers(n, src);
        if has_word(&m, "private") || n.child_by_field_name("type_parameters").is_some() {
            return None;
        }
        let is_constructor = n.kind() == "constructor_declaration";
        let ty = n
            .child_by_field_name("type")
            .map(|t| text(t, src).to_string());
        Some(Entry {
            name: text(n.child_by_field_name("name")?, src).to_string(),
            is_static: has_word(&m, "static"),
            is_constructor,
            void: ty.as_deref() == Some("void"),
            params: params(n, src)?,
        })
    };
    let mut entries = Vec::new();
    if let Some(e) = entry_of(member) {
        entries.push(e);
    } else {
        // A private (or generic) member: the class's members that call it.
        let name = text(member.child_by_field_name("name").ok_or("no name")?, src).to_string();
        let callers = methods.iter().copied().filter(|m| {
            m.id() != member.id() && {
                let b = text(*m, src);
                b.contains(&format!("{name}(")) || b.contains(&format!("{name} ("))
            }
        });
        for m in callers {
            if let Some(e) = entry_of(m) {
                if !entries
                    .iter()
                    .any(|x: &Entry| x.name == e.name && x.params == e.params)
                {
                    entries.push(e);
                }
            }
            if entries.len() >= 3 {
                break;
            }
        }
        if entries.is_empty() {
            return Err(format!(
                "`{name}` is private and no member of its class that others can call calls it"
            ));
        }
    }
    Ok(Target {
        package,
        class: chain.join("."),
        simple,
        abstract_or_interface,
        constructors,
        entries,
    })
}
