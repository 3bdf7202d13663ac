//! The generated Java: the observer and the regression test, their shared helpers, and
//! reading back what they and javac said.

use super::*;

/// The helpers both generated classes carry: an outcome as a string.
pub(super) const SHOW_HELPERS: &str = r#"    private interface Call {
        Object run() throws Throwable;
    }

    private static String outcome(Call call) {
        try {
            return show(call.run());
        } catch (Throwable t) {
            return "throws " + t.getClass().getName();
        }
    }

    private static String show(Object v) {
        if (v == null) {
            return "null";
        }
        if (v.getClass().isArray()) {
            return java.util.Arrays.deepToString(new Object[] {v});
        }
        try {
            if (v.getClass().getMethod("toString").getDeclaringClass() != Object.class) {
                return String.valueOf(v);
            }
        } catch (Exception e) {
            // no public toString: the class alone
        }
        return "a " + v.getClass().getName();
    }
"#;

/// The observer's extra helper: a call on a thread of its own, given up after
/// [`CALL_MILLIS`].
pub(super) const OBSERVE_HELPER: &str = r#"    private static int stuck = 0;

    private static String observe(final Call call) throws Exception {
        if (stuck >= 2) {
            return "skipped";
        }
        final String[] out = new String[1];
        Thread t = new Thread(new Runnable() {
            public void run() {
                out[0] = outcome(call);
            }
        });
        t.setDaemon(true);
        t.start();
        t.join(MILLIS);
        if (t.isAlive()) {
            stuck++;
            return "timeout";
        }
        return out[0];
    }
"#;

/// `call` as an anonymous `Call` (source levels before Java 8 have no lambdas): an expression
/// is returned, a block (`{ …; return r; }`) is the method's body.
pub(super) fn anonymous(body: &str) -> String {
    let inner = match body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
        Some(block) => block.trim().to_string(),
        None => format!("return {body};"),
    };
    format!("new Call() {{ public Object run() throws Throwable {{ {inner} }} }}")
}

/// A Java string literal of `s`.
pub fn java_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{:04x}", u));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether an import is needed by `bodies`: a wildcard always, else where its last name
/// appears in one as a word.
pub(super) fn import_used(import: &str, bodies: &[&str]) -> bool {
    let name = import
        .trim_end_matches(';')
        .trim()
        .rsplit('.')
        .next()
        .unwrap_or("")
        .trim();
    if name == "*" || name.is_empty() {
        return true;
    }
    bodies.iter().any(|b| {
        b.match_indices(name).any(|(at, _)| {
            let before = b[..at].chars().next_back();
            let after = b[at + name.len()..].chars().next();
            let word =
                |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
            !word(before) && !word(after)
        })
    })
}

pub(super) fn header(
    plan: &Plan,
    calls: &[&Call],
    extra: &str,
) -> (String, BTreeMap<usize, String>) {
    let mut s = String::new();
    if !plan.package.is_empty() {
        s.push_str(&format!("package {};\n\n", plan.package));
    }
    let mut import_lines = BTreeMap::new();
    let bodies: Vec<&str> = calls.iter().map(|c| c.body.as_str()).collect();
    let imports: BTreeSet<&String> = calls
        .iter()
        .flat_map(|c| c.imports.iter())
        .filter(|i| import_used(i, &bodies))
        .collect();
    for i in imports {
        import_lines.insert(s.lines().count() + 1, i.clone());
        s.push_str(i);
        s.push('\n');
    }
    s.push_str(plan.flavor.imports());
    s.push_str(extra);
    (s, import_lines)
}

/// The observer: one test that makes every call and writes `index<TAB>outcome` lines to
/// `out_path` (as the test process sees it).
pub fn observer(plan: &Plan, calls: &[usize], out_path: &str) -> Generated {
    let chosen: Vec<&Call> = calls.iter().map(|&i| &plan.calls[i]).collect();
    let (mut s, import_lines) = header(plan, &chosen, "");
    let class = format!("SweForgeObserve{}", plan.class_name);
    s.push_str(&format!(
        "\npublic class {class}{} {{\n",
        plan.flavor.extends()
    ));
    s.push_str(&format!(
        "    private static final long MILLIS = {CALL_MILLIS}L;\n\n"
    ));
    s.push_str(plan.flavor.annotation());
    s.push_str("    public void testObserve() throws Exception {\n");
    s.push_str("        java.util.List<String> out = new java.util.ArrayList<String>();\n");
    let mut call_lines = BTreeMap::new();
    for &i in calls {
        let line = s.lines().count() + 1;
        call_lines.insert(i, line);
        s.push_str(&format!(
            "        out.add(\"{i}\\t\" + observe({}).replace(\"\\\\\", \"\\\\\\\\\").replace(\"\\n\", \"\\\\n\").replace(\"\\r\", \"\\\\r\"));\n",
            anonymous(&plan.calls[i].body)
        ));
    }
    s.push_str(&format!(
        "        java.io.Writer w = new java.io.OutputStreamWriter(new java.io.FileOutputStream({}), \"UTF-8\");\n        \
         try {{\n            for (String line : out) {{\n                w.write(line + \"\\n\");\n            }}\n        \
         }} finally {{\n            w.close();\n        }}\n    }}\n\n",
        java_string(out_path)
    ));
    s.push_str(SHOW_HELPERS);
    s.push('\n');
    s.push_str(OBSERVE_HELPER);
    s.push_str("}\n");
    let fqcn = plan.qualified(&class);
    Generated {
        path: format!("{}{class}.java", plan.test_dir),
        source: s,
        call_lines,
        import_lines,
        tests: vec![format!("{fqcn}#testObserve")],
    }
}

/// The observer's lines: call index → outcome (escapes undone).
pub fn parse_observations(text: &str) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((i, v)) = line.split_once('\t') else {
            continue;
        };
        let Ok(i) = i.parse::<usize>() else {
            continue;
        };
        let mut s = String::with_capacity(v.len());
        let mut it = v.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                match it.next() {
                    Some('n') => s.push('\n'),
                    Some('r') => s.push('\r'),
                    Some(o) => s.push(o),
                    None => {}
                }
            } else {
                s.push(c);
            }
        }
        out.insert(i, s);
    }
    out
}

/// Whether an outcome can be asserted: no identity hash, no timing, not given up.
pub fn assertable(outcome: &str) -> bool {
    if matches!(outcome, "timeout" | "skipped") {
        return false;
    }
    // `Foo@1b6d3586`: an identity hash code, different in every JVM.
    let b = outcome.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'@' {
            let hex = b[i + 1..]
                .iter()
                .take_while(|x| x.is_ascii_hexdigit())
                .count();
            if hex >= 5 {
                return false;
            }
        }
    }
    true
}

/// Call indices whose outcomes differ between the two observations, where the clean one can
/// be asserted and the buggy one is not a give-up.
pub fn differing(clean: &BTreeMap<usize, String>, buggy: &BTreeMap<usize, String>) -> Vec<usize> {
    clean
        .iter()
        .filter(|(i, c)| {
            assertable(c)
                && buggy
                    .get(i)
                    .is_some_and(|b| b != *c && !matches!(b.as_str(), "timeout" | "skipped"))
        })
        .map(|(i, _)| *i)
        .collect()
}

/// The regression test: one test method per case, asserting the clean outcome.
pub fn regression_test(plan: &Plan, cases: &[(usize, String)]) -> Generated {
    let chosen: Vec<&Call> = cases.iter().map(|(i, _)| &plan.calls[*i]).collect();
    let (mut s, import_lines) = header(plan, &chosen, "");
    let class = &plan.class_name;
    s.push_str(&format!(
        "\npublic class {class}{} {{\n",
        plan.flavor.extends()
    ));
    let member = plan.target.rsplit('.').next().unwrap_or("call");
    let mut call_lines = BTreeMap::new();
    let mut tests = Vec::new();
    let fqcn = plan.qualified(class);
    for (k, (i, expected)) in cases.iter().enumerate() {
        let name = format!("test{}{}", upper_first(member), k + 1);
        s.push_str(plan.flavor.annotation());
        s.push_str(&format!("    public void {name}() {{\n"));
        call_lines.insert(*i, s.lines().count() + 1);
        s.push_str(&format!(
            "        assertEquals({}, outcome({}));\n    }}\n\n",
            java_string(expected),
            anonymous(&plan.calls[*i].body)
        ));
        tests.push(format!("{fqcn}#{name}"));
    }
    s.push_str(SHOW_HELPERS);
    s.push_str("}\n");
    Generated {
        path: format!("{}{class}.java", plan.test_dir),
        source: s,
        call_lines,
        import_lines,
        tests,
    }
}

/// javac's error lines in `anomaly` for the file named `file_name` (`A.java:[12,5]`).
pub fn error_lines(anomaly: &str, file_name: &str) -> BTreeSet<usize> {
    let needle = format!("{file_name}:[");
    let mut out = BTreeSet::new();
    let mut rest = anomaly;
    while let Some(p) = rest.find(&needle) {
        let after = &rest[p + needle.len()..];
        let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse() {
            out.insert(n);
        }
        rest = after;
    }
    out
}

/// The lines of javac's own log (`…/A.java:12: error: …`) with errors in `file_name`.
pub fn javac_log_lines(log: &str, file_name: &str) -> BTreeSet<usize> {
    let needle = format!("{file_name}:");
    log.lines()
        .filter(|l| l.contains(": error: "))
        .filter_map(|l| {
            let at = l.find(&needle)?;
            let rest = &l[at + needle.len()..];
            rest.split(':').next()?.parse().ok()
        })
        .collect()
}
