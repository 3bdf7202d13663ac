//! The unit tests of `pytest`.

use super::*;
use crate::runner::parse_bash_times;

#[test]
fn a_long_selection_names_files_most_of_whose_tests_it_asks_for() {
    let mut all: Vec<String> = Vec::new();
    for i in 0..900 {
        all.push(format!("tests/test_a.py::test_{i}"));
    }
    for i in 0..600 {
        all.push(format!("tests/test_b.py::test_{i}"));
    }
    all.push("tests/test_c.py::test_only".into());
    let p = Pytest::new(None, vec![], vec![]).with_tests_per_file(&all);
    // All of a, a third of b, c's one test: a by its file, the others by their ids.
    let mut asked: Vec<String> = all[..900].to_vec();
    asked.extend(all[900..1100].iter().cloned());
    asked.push("tests/test_c.py::test_only".into());
    let sel = p.selection(Some(&asked)).unwrap();
    assert_eq!(sel[0], "tests/test_a.py");
    assert_eq!(sel.len(), 1 + 200 + 1);
    assert!(sel.contains(&"tests/test_b.py::test_0".to_string()));
    // Half of b is enough to name it.
    let mut asked: Vec<String> = all[..900].to_vec();
    asked.extend(all[900..1200].iter().cloned());
    assert_eq!(
        p.selection(Some(&asked)).unwrap(),
        ["tests/test_a.py", "tests/test_b.py"]
    );
    // A short selection, or no known files: the ids as they are.
    assert_eq!(p.selection(Some(&all[..100])), None);
    assert_eq!(
        Pytest::new(None, vec![], vec![]).selection(Some(&asked)),
        None
    );
    assert_eq!(p.selection(None), None);
}

#[test]
fn parses_bash_times() {
    let t = "0m0.010s 0m0.002s\n1m2.500s 0m0.250s\n";
    assert_eq!(parse_bash_times(t), Some(62.75));
    assert_eq!(parse_bash_times("garbage"), None);
}

#[test]
fn wraps_with_cpu_limit_and_times() {
    let b = RunBudget {
        wall: std::time::Duration::from_secs(30),
        cpu: Some(std::time::Duration::from_millis(7200)),
    };
    let w = wrap("/s", "python -m pytest", b);
    assert!(
        w.starts_with("ulimit -S -t 8\nulimit -H -t 13\npython -m pytest\n"),
        "{w}"
    );
    assert!(w.contains("times > /s/times.txt"));
}

#[test]
fn a_conftest_load_failure_names_the_conftest_and_the_exception() {
    let stderr = b"ImportError while loading conftest '/tmp/wt/worker-1/repo/tests/conftest.py'.\n\
tests/conftest.py:5: in <module>\n    from marshmallow import Schema\n\
src/marshmallow/decorators.py:248: in set_hook\n    function.__hook__ = {}\n\
E   AttributeError: 'str' object has no attribute '__hook__'\n";
    assert_eq!(
        conftest_failure(b"", stderr, "/tmp/wt/worker-1/repo"),
        Some((
            "tests/conftest.py".to_string(),
            "AttributeError: 'str' object has no attribute '__hook__'".to_string()
        ))
    );
    assert_eq!(
        conftest_failure(b"ERROR: usage: pytest [options]", b"", "/r"),
        None
    );
}
