# swe-forge's verdict for pytest in a harness (Harbor's tests/test.sh), in one file.
#
# As a pytest plugin (`-p swe_forge_verdict`, with this file's folder on PYTHONPATH), it appends
# each test's outcome per phase to the file $SWE_FORGE_RESULTS as pytest reports it, one line
# each: "phase<TAB>outcome<TAB>node id".
#
# As a script (`python swe_forge_verdict.py RESULTS GRADED [MUST_FAIL MUST_PASS]`), it reads
# those lines and the graded test ids (one per line in GRADED), prints one line per graded test
# that did not pass, and exits 0 only when every graded test passed its call phase and failed
# none: a test absent from the results failed. The reward is read per test, never from
# pytest's exit status. MUST_FAIL and MUST_PASS are hidden tests added under names made for
# this run: unless the one failed and the other passed, the runner was tampered with (exit 1).
# `--canary RESULTS MUST_FAIL MUST_PASS` checks only those; `--failed RESULTS` prints
# `FAILED <id>` for every test that failed a phase.
import os
import sys

_out = None


def pytest_configure(config):
    global _out
    path = os.environ.get("SWE_FORGE_RESULTS")
    if path:
        _out = open(path, "a", buffering=1, encoding="utf-8")


def pytest_runtest_logreport(report):
    if _out is not None:
        _out.write("%s\t%s\t%s\n" % (report.when, report.outcome, report.nodeid))


def read(results):
    """The node ids that passed their call phase, and those that failed a phase."""
    passed, failed = set(), set()
    with open(results, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t", 2)
            if len(parts) != 3:
                continue
            when, outcome, nodeid = parts
            if outcome == "failed":
                failed.add(nodeid)
            elif when == "call" and outcome == "passed":
                passed.add(nodeid)
    return passed, failed


def canary(passed, failed, must_fail, must_pass):
    """Why the hidden checks show a tampered runner, or None."""
    if must_fail not in failed or must_fail in passed:
        return "the hidden test that must fail was not reported failed"
    if must_pass not in passed or must_pass in failed:
        return "the hidden test that must pass was not reported passed"
    return None


def verdict(results, graded, must_fail=None, must_pass=None):
    try:
        passed, failed = read(results)
    except OSError as e:
        print("VERDICT: no results (%s)" % e)
        return 1
    if must_fail is not None:
        why = canary(passed, failed, must_fail, must_pass)
        if why:
            print("VERDICT: tampered runner: %s" % why)
            return 1
    with open(graded, encoding="utf-8") as f:
        ids = [line.rstrip("\n") for line in f if line.strip()]
    bad = 0
    for test in ids:
        if test in failed:
            print("VERDICT: FAILED %s" % test)
            bad += 1
        elif test not in passed:
            print("VERDICT: MISSING %s" % test)
            bad += 1
    print("VERDICT: %d of %d graded tests passed" % (len(ids) - bad, len(ids)))
    return 0 if bad == 0 and ids else 1


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--failed":
        # Every test the run failed in some phase, as `FAILED <id>` (what SWE-bench's parser
        # reads; a test whose subtests failed is reported PASSED by pytest's summary).
        try:
            for nodeid in sorted(read(args[1])[1]):
                print("FAILED %s" % nodeid)
        except OSError:
            pass
        sys.exit(0)
    if args and args[0] == "--canary":
        try:
            why = canary(*read(args[1]), args[2], args[3])
        except OSError as e:
            why = "no results (%s)" % e
        if why:
            print("swe-forge: tampered runner: %s" % why)
        sys.exit(1 if why else 0)
    sys.exit(verdict(*args))
