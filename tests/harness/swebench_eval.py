#!/usr/bin/env python3
"""Evaluate swe-forge tasks with the official SWE-bench harness (swebench==5.0.2), unchanged.

    python tests/harness/swebench_eval.py --dataset tasks.jsonl --predictions preds.jsonl \
        --run-id my-run --report-dir out/ [--max-workers 4] [--timeout 1800] [--resume]

`--predictions gold` evaluates each record's own `patch`.

swebench 5.0.2 needs no per-repository code: everything it needs is a column of the record
(swebench/harness/utils.py:make_test_spec reads `instance_id`, `image`, `eval_script`, `repo`,
`version`, `FAIL_TO_PASS`, `PASS_TO_PASS`, `log_parser`, `eval_type`). This script only fills in
the columns a plain swe-forge record lacks, from that same record, and never overrides a
column the record already has:

    image        <- `image_name`                  (the local image, used verbatim)
    eval_script  <- built from `base_commit`, `test_patch`, the test ids and
                    `metadata.environment.test_command` (see make_eval_script)
    log_parser   <- "parse_log_pytest"
    eval_type    <- "pass_and_fail"
    version      <- str(version), "0" when empty
    FAIL_TO_PASS / PASS_TO_PASS <- JSON-encoded strings, as in the published datasets

It then checks that every image exists locally (the harness would otherwise try to pull it),
writes the normalised dataset and predictions under --report-dir, runs
swebench.harness.run_evaluation.main in-process with the working directory set to
--report-dir (the harness writes its logs under ./logs/run_evaluation/<run-id>/), and prints
per-instance verdicts as JSON (also written to <report-dir>/results.<run-id>.json).

Exit status: 0 when every instance with a prediction got a report, 1 when some did not, 2 when
nothing was run (bad input, missing image).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shlex
import sys
from pathlib import Path

# Markers our eval script prints; grading reads only the log between them
# (swebench.harness.constants START_TEST_OUTPUT / END_TEST_OUTPUT, grading.py:get_logs_eval).
START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
WORKDIR = "/testbed"  # swebench.image_builder.constants.CONTAINER_WORKDIR
DEFAULT_TEST_COMMAND = "python -m pytest"
# -rA: the short summary prints "PASSED <nodeid>" etc., the only lines parse_log_pytest reads.
# --color=no: a coloured status word would not start the line. The rest mirrors swe-forge's
# own pytest runs (src/runner/pytest.rs), so ids come out exactly as swe-forge recorded them.
PYTEST_FLAGS = "-rA --color=no -p no:cacheprovider --rootdir=. --continue-on-collection-errors"
# Docker container names (the harness names them sweb.eval.<instance_id>.<run_id>).
NAME_OK = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")


def read_records(path: Path) -> list[dict]:
    """A .json array or JSON lines. Lines are split on '\\n' only: str.splitlines (used by the
    harness's own .jsonl loader) also splits on U+2028/U+2029/U+0085, which serde_json leaves
    unescaped inside strings."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        return list(data.values()) if isinstance(data, dict) else data
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def as_list(value) -> list[str]:
    """FAIL_TO_PASS/PASS_TO_PASS arrive as a list (swe-forge) or a JSON string (SWE-bench)."""
    if value is None or value == "":
        return []
    return json.loads(value) if isinstance(value, str) else list(value)


def patch_paths(patch: str) -> tuple[list[str], list[str]]:
    """(paths the patch adds, other paths it touches), read from its `diff --git` headers."""
    from unidiff import PatchSet  # a dependency of swebench

    added, touched = [], []
    for f in PatchSet(patch):
        path = f.path  # without the a/ b/ prefix
        (added if f.is_added_file else touched).append(path)
        if f.is_rename and f.source_file.startswith("a/"):
            touched.append(f.source_file[2:])
    return added, touched


def heredoc(content: str) -> tuple[str, str]:
    """A quoted-heredoc delimiter that does not occur in `content`."""
    tag = hashlib.sha256(content.encode()).hexdigest()[:12]
    delim = f"EOF_SWE_FORGE_{tag}"
    while delim in content:
        delim += "_"
    return delim, content


def make_eval_script(rec: dict, f2p: list[str], p2p: list[str]) -> str:
    """The script the harness runs (as root, `/bin/bash /eval.sh`) after applying the model patch.

    It restores the files the test patch touches to `base_commit` (and removes the ones it
    adds, which a model patch may have created), applies the test patch, runs pytest on the
    files of the graded tests between the markers, then resets those files. The harness
    prepends `#!/bin/bash` / `set -uxo pipefail` and records the test command's exit status
    by inserting `SWEBENCH_TEST_EXIT_CODE=$?` right before the END marker line, so the test
    command must be the line just before it (swebench/harness/utils.py:record_test_exit_code).
    No conda: the image's venv is already on PATH through its ENV.
    """
    base = rec["base_commit"]
    test_patch = rec.get("test_patch") or ""
    env = (rec.get("metadata") or {}).get("environment") or {}
    command = rec.get("test_command") or env.get("test_command") or DEFAULT_TEST_COMMAND
    files = sorted({t.split("::", 1)[0] for t in f2p + p2p})
    q = shlex.quote
    lines = [f"cd {WORKDIR}", f"git config --global --add safe.directory {WORKDIR}"]
    restore = []
    if test_patch.strip():
        added, touched = patch_paths(test_patch)
        if touched:
            restore = [f"git checkout {q(base)} -- " + " ".join(map(q, touched))]
        lines += restore
        if added:
            lines.append("rm -rf -- " + " ".join(map(q, added)))
        delim, body = heredoc(test_patch[:-1] if test_patch.endswith("\n") else test_patch)
        # no test patch applied means no markers: graded "patch not applied", never a pass
        lines.append(f"git apply --verbose - <<'{delim}' || {{ echo 'test_patch did not apply'; exit 1; }}")
        lines += [body, delim]
    lines += [
        f": '{START}'",
        f"{command} {PYTEST_FLAGS} " + " ".join(map(q, files)),
        f": '{END}'",
    ]
    lines += restore
    return "\n".join(lines) + "\n"


def to_harness_instance(rec: dict) -> dict:
    """The record with the columns swebench 5.0.2 reads; existing columns win."""
    from swebench.harness.constants import EvalType
    from swebench.harness.log_parsers import PARSER_REGISTRY

    iid = rec["instance_id"]
    f2p, p2p = as_list(rec.get("FAIL_TO_PASS")), as_list(rec.get("PASS_TO_PASS"))
    inst = dict(rec)
    inst["FAIL_TO_PASS"], inst["PASS_TO_PASS"] = json.dumps(f2p), json.dumps(p2p)
    inst["repo"] = str(rec.get("repo") or iid.split("__", 1)[0])
    inst["version"] = str(rec.get("version") or "0")
    inst["image"] = rec.get("image") or rec.get("image_name")
    if not inst["image"]:
        raise ValueError(f"{iid}: no `image` or `image_name`")
    has_script = bool(rec.get("eval_script"))
    lang = str(rec.get("language") or "python").lower()
    if not has_script and lang != "python":
        raise ValueError(f"{iid}: language {lang!r} needs its own `eval_script` and `log_parser`")
    inst["eval_script"] = rec.get("eval_script") or make_eval_script(rec, f2p, p2p)
    inst["log_parser"] = rec.get("log_parser") or "parse_log_pytest"
    inst["eval_type"] = rec.get("eval_type") or EvalType.PASS_AND_FAIL.value
    if inst["log_parser"] not in PARSER_REGISTRY:
        raise ValueError(f"{iid}: unknown log_parser {inst['log_parser']!r}")
    EvalType(inst["eval_type"])  # raises on anything but pass_and_fail / fail_only
    if not NAME_OK.match(iid):
        raise ValueError(f"{iid}: not usable in a Docker container name")
    return inst


def read_predictions(arg: str, dataset: list[dict]) -> list[dict]:
    if arg == "gold":
        preds = [{"instance_id": d["instance_id"], "model_patch": d["patch"]} for d in dataset]
        name = "gold"
    else:
        preds = read_records(Path(arg))
        name = "swe-forge-predictions"
    for p in preds:
        p.setdefault("model_name_or_path", name)  # the harness indexes it unconditionally
        p.setdefault("model_patch", None)
    return preds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, help="swe-forge tasks (.jsonl or .json)")
    ap.add_argument("--predictions", required=True, help="predictions .jsonl/.json, or 'gold'")
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--report-dir", required=True)
    ap.add_argument("--max-workers", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per instance")
    ap.add_argument("--resume", action="store_true", help="reuse reports already in the run's logs")
    args = ap.parse_args()

    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT

    assert (START, END) == (START_TEST_OUTPUT, END_TEST_OUTPUT), "swebench changed its markers"
    if not NAME_OK.match(args.run_id):
        print(f"--run-id {args.run_id!r}: use letters, digits, '_', '.', '-'", file=sys.stderr)
        return 2
    report_dir = Path(args.report_dir).resolve()
    report_dir.mkdir(parents=True, exist_ok=True)
    try:
        dataset = [to_harness_instance(r) for r in read_records(Path(args.dataset))]
        preds = read_predictions(args.predictions, dataset)
    except (ValueError, KeyError, OSError) as e:
        print(f"bad input: {e}", file=sys.stderr)
        return 2

    from swebench.harness.constants import LOG_REPORT, RUN_EVALUATION_LOG_DIR

    run_dir = report_dir / RUN_EVALUATION_LOG_DIR / args.run_id
    if not args.resume and any(run_dir.glob(f"*/*/{LOG_REPORT}")):
        print(f"{run_dir} already has reports, which the harness would reuse; "
              "pick another --run-id or pass --resume", file=sys.stderr)
        return 2

    # Only local images: the harness pulls whatever `client.images.get` does not find.
    import docker

    client = docker.from_env()
    by_id = {d["instance_id"]: d for d in dataset}
    wanted = {by_id[p["instance_id"]]["image"] for p in preds
              if p["instance_id"] in by_id and p["model_patch"]}
    missing = []
    for image in sorted(wanted):
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            missing.append(image)
    if missing:
        print("images not found locally (the harness would try to pull them): "
              + " ".join(missing), file=sys.stderr)
        return 2

    data_path = report_dir / f"dataset.{args.run_id}.json"
    pred_path = report_dir / f"predictions.{args.run_id}.json"
    data_path.write_text(json.dumps(dataset, ensure_ascii=False, indent=1))
    pred_path.write_text(json.dumps(preds, ensure_ascii=False, indent=1))

    import resource
    from swebench.harness import run_evaluation

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)
    os.chdir(report_dir)  # the harness's log directory is relative to the working directory
    with contextlib.redirect_stdout(sys.stderr):  # keep stdout for our JSON alone
        harness_report = run_evaluation.main(
            dataset_name=str(data_path),
            split="test",  # ignored for a local .json
            instance_ids=None,
            predictions_path=str(pred_path),
            max_workers=args.max_workers,
            open_file_limit=limit,
            run_id=args.run_id,
            timeout=args.timeout,
            rewrite_reports=False,
            modal=False,
            report_dir=str(report_dir),
        )

    results, incomplete = {}, False
    for p in preds:
        iid = p["instance_id"]
        log_dir = run_dir / p["model_name_or_path"].replace("/", "__") / iid
        entry = {"resolved": False, "log_dir": str(log_dir)}
        report = log_dir / LOG_REPORT
        if not p["model_patch"]:
            entry["status"] = "empty_patch"  # the harness does not run these
        elif report.is_file():
            verdict = json.loads(report.read_text())[iid]
            entry["resolved"] = bool(verdict["resolved"])
            entry["status"] = "resolved" if entry["resolved"] else "unresolved"
            entry["patch_successfully_applied"] = verdict["patch_successfully_applied"]
            tests = verdict.get("tests_status") or {}
            entry["failed_tests"] = sorted(
                t for k in ("FAIL_TO_PASS", "PASS_TO_PASS") for t in tests.get(k, {}).get("failure", [])
            )
        else:
            entry["status"] = "error"  # see run_instance.log in log_dir
            incomplete = True
        results[iid] = entry
    out = {
        "run_id": args.run_id,
        "resolved": sum(r["resolved"] for r in results.values()),
        "total": len(results),
        "harness_report": str(harness_report) if harness_report else None,
        "instances": results,
    }
    (report_dir / f"results.{args.run_id}.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
