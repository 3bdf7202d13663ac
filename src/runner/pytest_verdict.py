# swe-forge's verdict for pytest in a harness (Harbor's tests/test.sh), in one file.
#
# As a pytest plugin (`-p swe_forge_verdict`, with this file's folder on PYTHONPATH), it appends
# each test's outcome per phase to the file $SWE_FORGE_RESULTS as pytest reports it, one line
# each: "phase<TAB>outcome<TAB>node id".
#
# As a script (`python swe_forge_verdict.py RESULTS GRADED`), it reads those lines and the
# graded test ids (one per line in GRADED), prints one line per graded test that did not pass,
# and exits 0 only when every graded test passed its call phase and failed none: a test absent
# from the results failed. The reward is read per test, never from pytest's exit status.
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


def verdict(results, graded):
    passed, failed = set(), set()
    try:
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
    except OSError as e:
        print("VERDICT: no results (%s)" % e)
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
    sys.exit(verdict(sys.argv[1], sys.argv[2]))
