#!/usr/bin/env python3
"""swe-forge: a harness's verdict on a Maven run of a Java task's grading command. Reads every
Surefire XML report under the current directory (`*/target/surefire-reports/TEST-*.xml`, all
modules), names each test case as swe-forge's records do (`package.Class#method`, invocation
suffixes of parameterized and repeated tests dropped, the worst status of a method's
invocations winning; see src/runner/surefire.rs, `test_id`), and prints the graded tests'
outcomes:

    python3 verdict.py --swebench ID...   `-Dtest=<id>` then `BUILD SUCCESS` or `BUILD FAILURE`
                                          per graded test, which SWE-bench's parse_log_maven
                                          reads (a line with -Dtest= names a test, the next
                                          BUILD line is its result)
    python3 verdict.py --harbor ID...     `PASSED <id>` or `FAILED <id>` per graded test

A graded test that no report holds, or that was skipped, failed. The exit status is 0 only when
every graded test passed.
"""

import glob
import sys
import xml.etree.ElementTree as ET

RANK = {"passed": 0, "skipped": 1, "failed": 2}


def test_id(classname, name):
    cut = [i for i in (name.find("("), name.find("["), name.find("{")) if i >= 0]
    method = (name[:min(cut)] if cut else name).strip()
    simple = classname.replace("$", ".").rsplit(".", 1)[-1]
    class_level = method in ("", classname, simple, "initializationError", "classMethod")
    if not classname:
        return method
    return classname if class_level else "%s#%s" % (classname, method)


def outcomes(root="."):
    status = {}
    for path in sorted(glob.glob(root + "/**/target/surefire-reports/TEST-*.xml", recursive=True)):
        try:
            tree = ET.parse(path)
        except (ET.ParseError, OSError):
            continue
        for case in tree.iter("testcase"):
            tid = test_id(case.get("classname", ""), case.get("name", ""))
            if case.find("failure") is not None or case.find("error") is not None:
                got = "failed"
            elif case.find("skipped") is not None:
                got = "skipped"
            else:
                got = "passed"
            if tid not in status or RANK[got] > RANK[status[tid]]:
                status[tid] = got
    return status


def main(argv):
    if not argv or argv[0] not in ("--swebench", "--harbor"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, graded = argv[0], argv[1:]
    status = outcomes()
    ok = True
    for tid in graded:
        passed = status.get(tid) == "passed"
        ok = ok and passed
        if mode == "--swebench":
            print("-Dtest=%s" % tid)
            print("BUILD SUCCESS" if passed else "BUILD FAILURE")
        else:
            print("%s %s" % ("PASSED" if passed else "FAILED", tid))
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
