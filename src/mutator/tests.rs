//! Unit tests of the mutators: loading, the errors that name the key at fault, and the
//! embedded rules against their own examples.

use super::*;
use crate::candidate::enumerate_source;

const GOOD: &str = r#"
id: py-test-flip
language: python
category: logic
description: Flips equality.
issue_hints: [wrong answer]
query: |
  (comparison_operator operators: _ @op)
rewrite:
  action: replace
  capture: op
  map: {"==": "!="}
examples:
  - before: "def f(a, b):\n    return a == b\n"
    after: "def f(a, b):\n    return a != b\n"
"#;

fn error_of(yaml: &str) -> String {
    load_str("mutators/python/bad.yaml", yaml)
        .unwrap_err()
        .to_string()
}

fn assert_names(msg: &str, key: &str) {
    assert!(
        msg.starts_with("mutators/python/bad.yaml: "),
        "no file in: {msg}"
    );
    assert!(
        msg.contains(&format!("key `{key}`")),
        "expected key `{key}` in: {msg}"
    );
}

#[test]
fn a_good_rule_loads() {
    let m = load_str("good.yaml", GOOD).unwrap();
    assert_eq!(m.id, "py-test-flip");
    assert_eq!(m.action(), "replace");
    assert_eq!(m.examples().len(), 1);
}

#[test]
fn embedded_python_rules_cover_every_category_and_their_examples_hold() {
    let rules = load_embedded(Language::Python).unwrap();
    assert!(rules.len() >= 16, "only {} rules", rules.len());
    for cat in CATEGORIES {
        assert!(
            rules.iter().any(|r| r.category == *cat),
            "no rule for {cat}"
        );
    }
    let mut examples = 0;
    for rule in &rules {
        assert!(rule.id.starts_with("py-"), "{}", rule.id);
        assert!(!rule.issue_hints.is_empty());
        for ex in rule.examples() {
            let cands = enumerate_source(
                "example.py",
                ex.before.as_bytes(),
                Language::Python,
                std::slice::from_ref(rule),
            )
            .unwrap();
            assert!(
                cands.iter().any(|c| c.apply(&ex.before) == ex.after),
                "{}: example does not hold:\n{}",
                rule.id,
                ex.before
            );
            examples += 1;
        }
        for program in rule.no_match() {
            let cands = enumerate_source(
                "example.py",
                program.as_bytes(),
                Language::Python,
                std::slice::from_ref(rule),
            )
            .unwrap();
            assert!(cands.is_empty(), "{}: matched {program}", rule.id);
        }
    }
    assert!(examples >= rules.len());
}

const JAVA: &str = r#"package p;

import java.util.*;

@Config(limit = 1 + 2)
public class Shop {
    static final int MAX = 10 < 20 ? 1 : 2;
    private final List<String> items = new ArrayList<>();
    private int count = MAX - 1;
    private final Runnable hook = () -> { if (MAX > 3) { System.gc(); } };

    static {
        int x = 1;
        x++;
    }

    @Deprecated(since = "1" + "2")
    public Shop(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n");
        }
        count = n;
        items.clear();
    }

    @Override
    public boolean equals(Object o) {
        if (o == this) return true;
        if (!(o instanceof Shop)) {
            return false;
        }
        Shop s = (Shop) o;
        return count == s.count && items.equals(s.items);
    }

    String find(String name, int start) {
        @SuppressWarnings(value = "unchecked") List<String> l = items;
        for (int i = start; i < l.size(); i++) {
            String it = l.get(i);
            if (it.equals(name)) {
                return it;
            }
        }
        return name.isEmpty() ? null : name.trim();
    }

    int total(int[] prices) {
        int sum = 0;
        int seen = 0;
        for (int p : prices) {
            sum += p * 2;
            seen++;
        }
        switch (seen) {
            case 0:
                sum = -1;
                break;
            case 1:
                sum = sum / 2;
                break;
            default:
                sum = Math.max(sum, seen);
        }
        try {
            check(sum, seen);
        } catch (IllegalStateException e) {
            throw new RuntimeException(e);
        }
        while (sum > 100 || seen < 0) {
            sum -= 10;
        }
        if (sum >= 5) {
            sum = sum % 7;
        } else {
            sum = Objects.equals(sum, seen) ? 1 : 0;
        }
        return sum + 1;
    }

    void check(int a, int b) {
        if (a == b) {
            throw new IllegalStateException();
        }
    }
}
"#;

fn java_parses_cleanly(text: &str) -> bool {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&Language::Java.grammar()).unwrap();
    !p.parse(text, None).unwrap().root_node().has_error()
}

#[test]
fn embedded_java_rules_cover_every_category_and_their_examples_hold() {
    let rules = load_embedded(Language::Java).unwrap();
    assert!(rules.len() >= 14, "only {} rules", rules.len());
    for cat in CATEGORIES {
        assert!(
            rules.iter().any(|r| r.category == *cat),
            "no Java rule for {cat}"
        );
    }
    for rule in &rules {
        assert!(rule.id.starts_with("java-"), "{}", rule.id);
        assert!(!rule.issue_hints.is_empty());
        assert!(!rule.examples().is_empty());
        for ex in rule.examples() {
            let cands = enumerate_source(
                "Example.java",
                ex.before.as_bytes(),
                Language::Java,
                std::slice::from_ref(rule),
            )
            .unwrap();
            assert!(
                cands.iter().any(|c| c.apply(&ex.before) == ex.after),
                "{}: example does not hold:\n{}",
                rule.id,
                ex.before
            );
        }
    }
}

#[test]
fn java_rules_fire_in_method_bodies_only_and_every_edit_parses() {
    let rules = load_embedded(Language::Java).unwrap();
    let cands = enumerate_source(
        "src/main/java/p/Shop.java",
        JAVA.as_bytes(),
        Language::Java,
        &rules,
    )
    .unwrap();
    // Every rule fires somewhere in this file.
    for rule in &rules {
        assert!(
            cands.iter().any(|c| c.mutator == rule.id),
            "{} makes no candidate",
            rule.id
        );
    }
    let line_of = |needle: &str| JAVA[..JAVA.find(needle).unwrap()].matches('\n').count() + 1;
    let first_body = line_of("    public Shop(int n)");
    let annotation = line_of("@SuppressWarnings");
    for c in &cands {
        let buggy = c.apply(JAVA);
        assert!(
            java_parses_cleanly(&buggy),
            "{} {:?} -> {:?}",
            c.mutator,
            c.before,
            c.after
        );
        assert!(
            c.line_range.0 > first_body,
            "{} outside a method body at line {}: {:?}",
            c.mutator,
            c.line_range.0,
            c.before
        );
        assert_ne!(c.line_range.0, annotation, "{} in an annotation", c.mutator);
        assert!(
            [
                "Shop.Shop",
                "Shop.equals",
                "Shop.find",
                "Shop.total",
                "Shop.check"
            ]
            .contains(&c.function.as_str()),
            "{}",
            c.function
        );
    }
    let has = |id: &str, before: &str, after: &str| {
        cands
            .iter()
            .any(|c| c.mutator == id && c.before == before && c.after == after)
    };
    // Wrong returns follow the declared type.
    assert!(has("java-return-null", "it", "null"));
    assert!(has("java-return-zero", "sum + 1", "0"));
    assert!(!cands
        .iter()
        .any(|c| c.mutator == "java-return-null" && c.function == "Shop.total"));
    assert!(!cands
        .iter()
        .any(|c| c.mutator == "java-return-zero" && c.function == "Shop.find"));
    // `!x.equals(y)`-like slots get parentheses, others do not.
    assert!(has(
        "java-equals-to-identity",
        "it.equals(name)",
        "it == name"
    ));
    assert!(has(
        "java-equals-to-identity",
        "Objects.equals(sum, seen)",
        "sum == seen"
    ));
    assert!(has(
        "java-equals-to-identity",
        "items.equals(s.items)",
        "items == s.items"
    ));
    // The last `break` of a switch, and the only statement of a block, stay.
    assert_eq!(
        cands
            .iter()
            .filter(|c| c.mutator == "java-switch-fallthrough")
            .count(),
        2
    );
    assert!(!cands
        .iter()
        .any(|c| c.mutator == "java-remove-call" && c.before.contains("check(sum")));
}

#[test]
fn return_types_come_from_the_enclosing_method_not_a_lambda() {
    let rules: Vec<Mutator> = load_embedded(Language::Java)
        .unwrap()
        .into_iter()
        .filter(|r| r.category == "wrong-return")
        .collect();
    let src = "class L {\n    java.util.function.Supplier<String> s(String x) {\n        java.util.function.IntSupplier f = () -> { return 1; };\n        return () -> x;\n    }\n    int[] a() { return new int[0]; }\n    void v() { return; }\n}\n";
    let cands = enumerate_source("L.java", src.as_bytes(), Language::Java, &rules).unwrap();
    let got: Vec<(&str, &str)> = cands
        .iter()
        .map(|c| (c.before.as_str(), c.after.as_str()))
        .collect();
    assert_eq!(got, [("() -> x", "null"), ("new int[0]", "null")]);
}

#[test]
fn java_predicates_and_parenthesize_are_checked_at_load() {
    let rule = |query: &str, rewrite: &str| {
        format!(
            "id: java-t\nlanguage: java\ncategory: logic\ndescription: t\nissue_hints: [t]\nquery: |\n  {query}\nrewrite: {rewrite}\nexamples:\n  - before: \"class A {{ boolean f(Object a) {{ return a.equals(a); }} }}\"\n    after: \"class A {{ boolean f(Object a) {{ return !(a == a); }} }}\"\n"
        )
    };
    let bad = load_str(
        "java-t.yaml",
        &rule(
            "((return_statement (_) @target) (#return-type? @target text))",
            "{action: replace, text: x}",
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("key `query`") && bad.contains("#return-type?"),
        "{bad}"
    );
    let bad = load_str(
        "java-t.yaml",
        &rule(
            "(ternary_expression consequence: (_) @a alternative: (_) @b)",
            "{action: swap, captures: [a, b], parenthesize: true}",
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(bad.contains("key `rewrite.parenthesize`"), "{bad}");
    // `parenthesize` wraps where the slot needs it: under `!` here.
    let ok = rule(
        "((unary_expression operand: (method_invocation object: (_) @l arguments: (argument_list (_) @r)) @target))",
        "{action: template, template: \"{{l}} == {{r}}\", parenthesize: true}",
    );
    let src = "class A { boolean f(Object a) { return !a.equals(a); } }";
    let ok = ok.replace("return a.equals(a);", "return !a.equals(a);");
    let m = load_str("java-t.yaml", &ok).unwrap();
    let cands = enumerate_source("A.java", src.as_bytes(), Language::Java, &[m]).unwrap();
    assert_eq!(cands.len(), 1);
    assert_eq!(cands[0].after, "(a == a)");
}

#[test]
fn a_query_that_does_not_compile_names_query() {
    let msg = error_of(&GOOD.replace(
        "(comparison_operator operators: _ @op)",
        "(no_such_node) @op",
    ));
    assert_names(&msg, "query");
}

#[test]
fn an_unsupported_predicate_names_query() {
    let msg = error_of(&GOOD.replace(
        "(comparison_operator operators: _ @op)",
        "((comparison_operator operators: _ @op) (#frobnicate? @op))",
    ));
    assert_names(&msg, "query");
    assert!(msg.contains("#frobnicate?"), "{msg}");
}

#[test]
fn a_missing_capture_names_rewrite_capture() {
    let msg = error_of(&GOOD.replace("capture: op", "capture: oops"));
    assert_names(&msg, "rewrite.capture");
    assert!(msg.contains("@oops"), "{msg}");
    let msg = error_of(&GOOD.replace("  capture: op\n", ""));
    assert_names(&msg, "rewrite.capture");
    assert!(msg.contains("@target"), "{msg}");
}

#[test]
fn an_unknown_action_names_rewrite_action() {
    let msg = error_of(&GOOD.replace("action: replace", "action: scramble"));
    assert_names(&msg, "rewrite.action");
    assert!(msg.contains("scramble"), "{msg}");
}

#[test]
fn unknown_keys_are_named() {
    assert_names(&error_of(&format!("{GOOD}colour: red\n")), "colour");
    assert_names(
        &error_of(&GOOD.replace("  capture: op\n", "  capture: op\n  speed: 3\n")),
        "rewrite.speed",
    );
    assert_names(
        &error_of(&GOOD.replace("    after: \"def", "    during: 1\n    after: \"def")),
        "examples[0].during",
    );
}

#[test]
fn missing_and_mistyped_keys_are_named() {
    assert_names(
        &error_of(&GOOD.replace("description: Flips equality.\n", "")),
        "description",
    );
    assert_names(
        &error_of(&GOOD.replace("issue_hints: [wrong answer]", "issue_hints: 3")),
        "issue_hints",
    );
    assert_names(
        &error_of(&GOOD.replace("language: python", "language: cobol")),
        "language",
    );
    assert_names(
        &error_of(&GOOD.replace("category: logic", "category: vibes")),
        "category",
    );
    assert_names(
        &error_of(&GOOD.replace("id: py-test-flip", "id: Test_Flip")),
        "id",
    );
    assert_names(
        &error_of(&GOOD.replace("[wrong answer]", "[\"use `!=`\"]")),
        "issue_hints[0]",
    );
}

#[test]
fn action_parameters_are_checked() {
    assert_names(
        &error_of(&GOOD.replace("map: {\"==\": \"!=\"}", "map: {}")),
        "rewrite.map",
    );
    assert_names(
        &error_of(&GOOD.replace("map: {\"==\": \"!=\"}", "deltas: [1]")),
        "rewrite.deltas",
    );
    assert_names(
        &error_of(&GOOD.replace("  map: {\"==\": \"!=\"}\n", "")),
        "rewrite.text",
    );
    let swap = GOOD.replace(
        "action: replace\n  capture: op\n  map: {\"==\": \"!=\"}",
        "action: swap\n  captures: [op, nope]",
    );
    assert_names(&error_of(&swap), "rewrite.captures");
    let tmpl = GOOD.replace(
        "action: replace\n  capture: op\n  map: {\"==\": \"!=\"}",
        "action: template\n  capture: op\n  template: \"{{op}} {{ghost}}\"",
    );
    let msg = error_of(&tmpl);
    assert_names(&msg, "rewrite.template");
    assert!(msg.contains("@ghost"), "{msg}");
    let shift = GOOD.replace(
        "action: replace\n  capture: op\n  map: {\"==\": \"!=\"}",
        "action: int_shift\n  capture: op\n  deltas: [0]",
    );
    assert_names(&error_of(&shift), "rewrite.deltas");
}

#[test]
fn examples_are_checked() {
    let msg = error_of(&GOOD.replace("return a != b", "return a is b"));
    assert_names(&msg, "examples[0].after");
    assert!(msg.contains("`==` -> `!=`"), "{msg}");
    let msg = error_of(&GOOD.replace(
        "    return a == b\\n\"\n    after",
        "    return a ==\\n\"\n    after",
    ));
    assert_names(&msg, "examples[0].before");
    let msg = error_of(&format!(
        "{GOOD}no_match:\n  - \"def g(x):\\n    return x == 1\\n\"\n"
    ));
    assert_names(&msg, "no_match[0]");
    assert_names(&error_of(&GOOD.replace(
        "examples:\n  - before: \"def f(a, b):\\n    return a == b\\n\"\n    after: \"def f(a, b):\\n    return a != b\\n\"\n",
        "examples: []\n",
    )), "examples");
}

#[test]
fn load_dir_checks_names_languages_and_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("py-test-flip.yaml"), GOOD).unwrap();
    let rules = load_dir(dir.path(), Language::Python).unwrap();
    assert_eq!(rules.len(), 1);

    std::fs::write(dir.path().join("py-test-flip.yml"), GOOD).unwrap();
    let msg = load_dir(dir.path(), Language::Python)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("py-test-flip.yml: key `id`: duplicate id"),
        "{msg}"
    );
    std::fs::remove_file(dir.path().join("py-test-flip.yml")).unwrap();

    std::fs::write(dir.path().join("other-name.yaml"), GOOD).unwrap();
    let msg = load_dir(dir.path(), Language::Python)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("other-name.yaml: key `id`"), "{msg}");
    std::fs::remove_file(dir.path().join("other-name.yaml")).unwrap();

    let msg = load_dir(dir.path(), Language::Java)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("py-test-flip.yaml: key `language`"), "{msg}");

    let msg = load_dir(&dir.path().join("absent"), Language::Python)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("absent: cannot read"), "{msg}");
}

fn parses_cleanly(lang: Language, text: &str) -> bool {
    let mut p = tree_sitter::Parser::new();
    p.set_language(&lang.grammar()).unwrap();
    !p.parse(text, None).unwrap().root_node().has_error()
}

#[test]
fn embedded_javascript_rules_cover_every_category_and_typescript_shares_them() {
    let js = load_embedded(Language::JavaScript).unwrap();
    assert!(js.len() >= 12, "only {} rules", js.len());
    for cat in CATEGORIES {
        assert!(
            js.iter().any(|r| r.category == *cat),
            "no JavaScript rule for {cat}"
        );
    }
    let ts = load_embedded(Language::TypeScript).unwrap();
    let ids = |rules: &[Mutator]| rules.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    assert_eq!(
        ids(&ts),
        ids(&js),
        "TypeScript loads every rule that names it"
    );
    for rule in js.iter().chain(&ts) {
        assert!(rule.id.starts_with("js-"), "{}", rule.id);
        let name = format!("example.{}", rule.language.extensions()[0]);
        for ex in rule.examples() {
            let cands = enumerate_source(
                &name,
                ex.before.as_bytes(),
                rule.language,
                std::slice::from_ref(rule),
            )
            .unwrap();
            assert!(
                cands.iter().any(|c| c.apply(&ex.before) == ex.after),
                "{} ({}): example does not hold:\n{}",
                rule.id,
                rule.language,
                ex.before
            );
        }
    }
}

#[test]
fn javascript_rules_fire_in_named_functions_only_and_every_edit_parses() {
    let rules = load_embedded(Language::JavaScript).unwrap();
    let src = r#"const LIMIT = 3 < 4 ? 1 : 2;
if (require.main === module) {
  main(process.argv[2] > 1);
}
function main(n) {
  return n > LIMIT;
}
class Shelf {
  constructor(size) {
    this.size = size ?? 10;
  }
  fits(n) {
    if (n < 0) {
      throw new RangeError("negative");
    }
    return n <= this.size;
  }
}
exports.half = function (x) {
  return x / 2;
};
Shelf.prototype.twice = (x) => x * 2;
const count = (items) => items.filter((i) => i?.ok).length - 1;
"#;
    let cands = enumerate_source("shelf.js", src.as_bytes(), Language::JavaScript, &rules).unwrap();
    let functions: std::collections::BTreeSet<&str> =
        cands.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(
        functions.into_iter().collect::<Vec<_>>(),
        ["Shelf.constructor", "Shelf.fits", "count", "half", "twice"],
        "module-level code, the script guard and `main`, which only the guard calls, are not \
         mutated"
    );
    for c in &cands {
        let edited = c.apply(src);
        assert!(
            parses_cleanly(Language::JavaScript, &edited),
            "{} makes a broken file:\n{edited}",
            c.mutator
        );
    }
    for rule in [
        "js-nullish-to-or",
        "js-optional-chain-drop",
        "js-remove-guard",
        "js-arith-swap",
    ] {
        assert!(
            cands.iter().any(|c| c.mutator == rule),
            "no {rule} candidate"
        );
    }
}

#[test]
fn typescript_sources_are_mutated_around_their_types() {
    let rules = load_embedded(Language::TypeScript).unwrap();
    let src = r#"export interface Item { weight: number }
export function clamp(n: number, top: number): number {
  if (n > top) {
    return top;
  }
  return n;
}
export class Shelf<T extends Item> {
  private items: T[] = [];
  total(): number {
    return this.items.reduce((s: number, i: T) => s + i.weight, 0) as number;
  }
  add(item: T): boolean {
    this.items.push(item);
    return this.items.length > 0;
  }
}
export const half = (x: number): number => x / 2;
"#;
    let cands = enumerate_source("shelf.ts", src.as_bytes(), Language::TypeScript, &rules).unwrap();
    let functions: std::collections::BTreeSet<&str> =
        cands.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(
        functions.into_iter().collect::<Vec<_>>(),
        ["Shelf.add", "Shelf.total", "clamp", "half"]
    );
    for c in &cands {
        let edited = c.apply(src);
        assert!(
            parses_cleanly(Language::TypeScript, &edited),
            "{} makes a broken file:\n{edited}",
            c.mutator
        );
    }
    assert!(cands
        .iter()
        .any(|c| c.mutator == "js-compare-boundary" && c.function == "clamp"));
    assert!(cands
        .iter()
        .any(|c| c.mutator == "js-remove-call" && c.function == "Shelf.add"));
    // A declaration file holds types only: not a source to mutate.
    assert!(!Language::TypeScript.matches_path(std::path::Path::new("types/index.d.ts")));
    assert!(Language::TypeScript.matches_path(std::path::Path::new("src/index.ts")));
}
