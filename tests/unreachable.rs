//! Code no caller can run (`tests/fixtures/shadowed_copy`): `twins.compat` keeps a copy of
//! `Pair` that an import replaces, and a function only Python 2 would define. Their mutants are
//! `unreachable` (equivalent by construction), found by importing the package and looking for
//! a function object that holds their code; a live function no test calls (`spare`) and a
//! function made inside another one (`make_adder.add`) are not.

mod common;
use common::*;

#[test]
fn code_no_caller_can_run_is_unreachable_not_a_survivor() {
    let all = fixture_candidates("shadowed_copy");
    let cands = [
        pick_candidate(&all, "Pair.swap", "is not None"),
        pick_candidate(&all, "legacy_total", "is not None"),
        pick_candidate(&all, "spare", "x >= 10"),
        pick_candidate(&all, "make_adder.add", "is not None"),
    ];
    let (_, dir) = verify_on_fixture("shadowed_copy", &cands, &[]);
    let decided = jsonl(&dir.path().join("out/candidates.jsonl"));
    assert_eq!(decided.len(), 4, "{decided:?}");
    let by_function = |f: &str| {
        decided
            .iter()
            .find(|c| c["function"] == f)
            .unwrap_or_else(|| panic!("no {f}: {decided:?}"))
    };
    for f in ["Pair.swap", "legacy_total"] {
        let c = by_function(f);
        assert_eq!(c["reason"], "unreachable", "{c}");
        assert!(
            c["detail"]
                .as_str()
                .is_some_and(|d| d.contains("no function object holds")),
            "{c}"
        );
    }
    for f in ["spare", "make_adder.add"] {
        let c = by_function(f);
        assert_ne!(c["reason"], "unreachable", "{c}");
    }
}
