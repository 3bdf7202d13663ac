//! Unit tests of the Java synthesis's text and syntax.

use super::*;

const SRC: &str = r#"package a.b;

import java.util.List;

public class Codec {
private final int width;

public Codec(int width) {
    this.width = width;
}

public Codec() {
    this(4);
}

public static String pad(String s, int n) {
    return s + n;
}

public String encode(String s) {
    return helper(s);
}

private String helper(String s) {
    return s.trim();
}

public void reset() {
}

static class Inner {
    int twice(int x) { return 2 * x; }
}
}
"#;

const TEST: &str = r#"package a.b;

import org.junit.Test;
import java.util.Locale;
import static org.junit.Assert.assertEquals;

public class CodecTest {
@Test
public void encodes() {
    Codec c = new Codec(8);
    assertEquals("x", c.encode("x "));
    assertEquals("y", new Codec().encode("y"));
    String s = "abc";
    assertEquals("abc1", Codec.pad(s, 1));
    int n = compute();
    Codec.pad("q", n);
}
}
"#;

fn index() -> Index {
    Index::build(&[("src/test/java/a/b/CodecTest.java".into(), TEST.into())])
}

#[test]
fn the_flavor_is_the_module_tests() {
    assert_eq!(Flavor::of(&[TEST]), Some(Flavor::Junit4));
    assert_eq!(
        Flavor::of(&["import org.junit.jupiter.api.Test;", TEST]),
        Some(Flavor::Junit5)
    );
    assert_eq!(
        Flavor::of(&["public class T extends junit.framework.TestCase {}"]),
        Some(Flavor::Junit3)
    );
    assert_eq!(Flavor::of(&["class X {}"]), None);
}

#[test]
fn invocations_with_constant_arguments_are_mined_with_locals_substituted() {
    let ix = index();
    let encode = &ix.invocations["encode"];
    let texts: Vec<&str> = encode.iter().map(|(c, _, _)| c.as_str()).collect();
    assert!(
        texts.contains(&"(new Codec(8)).encode(\"x \")"),
        "{texts:?}"
    );
    assert!(texts.contains(&"new Codec().encode(\"y\")"), "{texts:?}");
    let pad: Vec<&str> = ix.invocations["pad"]
        .iter()
        .map(|(c, _, _)| c.as_str())
        .collect();
    // `n` comes from a call of the test class: not a constant.
    assert_eq!(pad, vec!["Codec.pad((\"abc\"), 1)"]);
    // The receivers of the type.
    let codecs: Vec<&str> = ix.instances["Codec"]
        .iter()
        .map(|(e, _)| e.as_str())
        .collect();
    assert!(codecs.contains(&"new Codec(8)"), "{codecs:?}");
    // JUnit's imports are not copied; the others are.
    assert!(ix.imports[0].contains("import java.util.Locale;"));
    assert!(!ix.imports[0].iter().any(|i| i.contains("junit")));
}

#[test]
fn a_public_static_method_is_called_with_mined_and_built_arguments() {
    let ix = index();
    let line = SRC
        .lines()
        .position(|l| l.contains("static String pad"))
        .unwrap()
        + 1;
    let p = plan(SRC, line, "src/test/java/", &[], Flavor::Junit4, &ix, 7).unwrap();
    assert_eq!(p.target, "Codec.pad");
    assert_eq!(p.class_name, "CodecPadRegressionTest");
    assert_eq!(p.test_dir, "src/test/java/a/b/");
    assert_eq!(p.calls[0].body, "Codec.pad((\"abc\"), 1)");
    assert!(p.calls.len() > 5);
    assert!(p.calls.iter().all(|c| c.body.starts_with("Codec.pad(")));
}

#[test]
fn a_private_method_is_reached_through_its_callers() {
    let ix = index();
    let line = SRC
        .lines()
        .position(|l| l.contains("private String helper"))
        .unwrap()
        + 1;
    let p = plan(SRC, line, "src/test/java/", &[], Flavor::Junit4, &ix, 7).unwrap();
    assert_eq!(p.target, "Codec.encode");
    let bodies: Vec<&str> = p.calls.iter().map(|c| c.body.as_str()).collect();
    assert!(
        bodies.contains(&"(new Codec(8)).encode(\"x \")"),
        "{bodies:?}"
    );
    assert!(bodies.iter().all(|b| b.contains(".encode(")), "{bodies:?}");
}

#[test]
fn a_void_instance_method_is_observed_through_its_receiver() {
    let ix = index();
    let line = SRC
        .lines()
        .position(|l| l.contains("public void reset"))
        .unwrap()
        + 1;
    let p = plan(SRC, line, "src/test/java/", &[], Flavor::Junit5, &ix, 7).unwrap();
    assert!(
        p.calls.iter().all(|c| c.body.starts_with("{ Codec r = ")),
        "{:?}",
        p.calls
    );
}

#[test]
fn members_of_inner_or_anonymous_classes_are_refused_static_nested_ones_are_not() {
    let ix = index();
    let line = SRC.lines().position(|l| l.contains("int twice")).unwrap() + 1;
    let p = plan(SRC, line, "src/test/java/", &[], Flavor::Junit4, &ix, 1).unwrap();
    assert!(p
        .calls
        .iter()
        .all(|c| c.body.starts_with("(new Codec.Inner()).twice(")));
    let inner = "package p;\npublic class O {\n  class I {\n    public int f(int x) { return x; }\n  }\n}\n";
    let e = plan(inner, 4, "t/", &[], Flavor::Junit4, &ix, 1).unwrap_err();
    assert!(e.contains("inner class"), "{e}");
    let anon = "package p;\npublic class O {\n  Runnable r = new Runnable() {\n    public void run() { }\n  };\n}\n";
    let e = plan(anon, 4, "t/", &[], Flavor::Junit4, &ix, 1).unwrap_err();
    assert!(e.contains("anonymous"), "{e}");
}

#[test]
fn a_taken_class_name_gets_a_number() {
    let ix = index();
    let line = SRC
        .lines()
        .position(|l| l.contains("static String pad"))
        .unwrap()
        + 1;
    let taken = vec!["src/test/java/a/b/CodecPadRegressionTest.java".to_string()];
    let p = plan(SRC, line, "src/test/java/", &taken, Flavor::Junit4, &ix, 7).unwrap();
    assert_eq!(p.class_name, "CodecPadRegression2Test");
}

#[test]
fn the_generated_classes_name_their_calls_lines_and_tests() {
    let ix = index();
    let line = SRC
        .lines()
        .position(|l| l.contains("static String pad"))
        .unwrap()
        + 1;
    let p = plan(SRC, line, "src/test/java/", &[], Flavor::Junit3, &ix, 7).unwrap();
    let o = observer(&p, &[0, 1], "/scratch/obs.txt");
    assert_eq!(
        o.path,
        "src/test/java/a/b/SweForgeObserveCodecPadRegressionTest.java"
    );
    assert_eq!(
        o.tests,
        vec!["a.b.SweForgeObserveCodecPadRegressionTest#testObserve"]
    );
    let lines: Vec<&str> = o.source.lines().collect();
    assert!(lines[o.call_lines[&1] - 1].contains(&p.calls[1].body));
    assert!(o.source.contains("extends junit.framework.TestCase"));
    let r = regression_test(&p, &[(1, "x\"y".into())]);
    assert_eq!(r.tests, vec!["a.b.CodecPadRegressionTest#testPad1"]);
    assert!(r.source.contains("assertEquals(\"x\\\"y\", outcome(new Call() { public Object run() throws Throwable { return "));
    let lines: Vec<&str> = r.source.lines().collect();
    assert!(lines[r.call_lines[&1] - 1].contains(&p.calls[1].body));
}

#[test]
fn observations_parse_and_only_assertable_differences_count() {
    let clean = parse_observations("0\tjava.lang.String: a\\nb\n1\tthrows java.lang.X\n2\tFoo@1b6d3586\n3\tjava.lang.Integer: 1\n4\tnull\n");
    assert_eq!(clean[&0], "java.lang.String: a\nb");
    let buggy = parse_observations(
        "0\tjava.lang.String: a\\nb\n1\tjava.lang.Integer: 2\n2\tFoo@aaaaaaa\n3\ttimeout\n",
    );
    assert_eq!(differing(&clean, &buggy), vec![1]);
}

#[test]
fn javac_error_lines_are_read_for_the_file() {
    let a = "compile error: test sources: src/test/java/a/B.java:[12,5] cannot find symbol; src/test/java/a/C.java:[3,1] x; src/test/java/a/B.java:[40,9] y";
    assert_eq!(error_lines(a, "B.java"), BTreeSet::from([12, 40]));
}

#[test]
fn arguments_are_counted_at_the_top_level() {
    assert_eq!(count_args("a.f()"), Some(0));
    assert_eq!(count_args("a.f(1, g(2, 3), \"x,y\", ')')"), Some(4));
    assert_eq!(count_args("new A(1).f(new int[] {1, 2})"), Some(1));
}

#[test]
fn java_strings_escape() {
    assert_eq!(java_string("a\"b\\c\n\u{e9}"), "\"a\\\"b\\\\c\\n\\u00e9\"");
}

#[test]
fn calls_are_anonymous_classes_for_old_source_levels() {
    assert_eq!(
        anonymous("A.f(1)"),
        "new Call() { public Object run() throws Throwable { return A.f(1); } }"
    );
    assert_eq!(
        anonymous("{ A r = new A(); r.g(); return r; }"),
        "new Call() { public Object run() throws Throwable { A r = new A(); r.g(); return r; } }"
    );
}

#[test]
fn javac_s_own_log_gives_every_error_line() {
    let log = "/w/src/test/java/a/B.java:12: error: cannot find symbol\n    x\n    ^\n/w/src/test/java/a/B.java:30: error: ';' expected\n/w/src/test/java/a/C.java:3: error: y\n2 errors\n";
    assert_eq!(javac_log_lines(log, "B.java"), BTreeSet::from([12, 30]));
}

#[test]
fn array_initializers_of_declarations_become_array_creations() {
    let test = "package a;\npublic class T {\n  void t() {\n    String[] args = { \"-a\", \"b\" };\n    P.flatten(args, true);\n  }\n}\n";
    let ix = Index::build(&[("T.java".into(), test.into())]);
    let calls: Vec<&str> = ix.invocations["flatten"]
        .iter()
        .map(|(c, _, _)| c.as_str())
        .collect();
    assert_eq!(
        calls,
        vec!["P.flatten((new String[] { \"-a\", \"b\" }), true)"]
    );
}

#[test]
fn only_the_imports_the_calls_name_are_kept() {
    assert!(import_used("import java.util.Locale;", &["f(Locale.US)"]));
    assert!(!import_used(
        "import java.util.Locale;",
        &["f(MyLocale.US)"]
    ));
    assert!(import_used("import java.util.*;", &["f(1)"]));
    assert!(import_used("import static a.B.CONST;", &["f(CONST)"]));
}

#[test]
fn fields_and_static_imports_are_substituted_and_unknown_constants_refused() {
    let test = r#"package a.tests;

import a.Zone;
import static a.Zones.UTC;

public class T {
    private static final Zone PARIS = Zone.forId("Europe/Paris");
    private static final Zone OTHER = makeZone();

    void t() {
        P.shift(PARIS, 1);
        P.shift(UTC, 2);
        P.shift(OTHER, 3);
        P.shift(INHERITED, 4);
        PARIS.offset(5);
    }
}
"#;
    let ix = Index::build(&[("T.java".into(), test.into())]);
    let calls: Vec<&str> = ix.invocations["shift"]
        .iter()
        .map(|(c, _, _)| c.as_str())
        .collect();
    assert!(
        calls.contains(&"P.shift((Zone.forId(\"Europe/Paris\")), 1)"),
        "{calls:?}"
    );
    assert!(calls.contains(&"P.shift((a.Zones.UTC), 2)"), "{calls:?}");
    // A field the test computes, and a constant no import brings: not constants here.
    assert_eq!(calls.len(), 2, "{calls:?}");
    let offsets: Vec<&str> = ix.invocations["offset"]
        .iter()
        .map(|(c, _, _)| c.as_str())
        .collect();
    assert_eq!(offsets, vec!["(Zone.forId(\"Europe/Paris\")).offset(5)"]);
    // The file's own package comes along, for the classes it names without importing.
    assert!(
        ix.imports[0].contains("import a.tests.*;"),
        "{:?}",
        ix.imports[0]
    );
}

#[test]
fn a_member_without_a_receiver_says_so() {
    let ix = index();
    let src = "package p;\npublic abstract class Shape {\n  public int sides(String name) {\n    return name.length();\n  }\n}\n";
    let e = plan(src, 3, "t/", &[], Flavor::Junit4, &ix, 1).unwrap_err();
    assert!(e.contains("no `Shape` could be made"), "{e}");
}
