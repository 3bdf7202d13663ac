"""Latency and throughput of a running `swe-forge serve` (BENCHMARKS.md, "The environment
server"), through this client:

    python3 clients/python/bench_serve.py --url http://127.0.0.1:8080 --tasks out/tasks.jsonl

- `reset`: sampled resets, each after the warm pool had time to refill (`--pool` containers
  started ahead), seconds;
- `bash true`: one session, sequential steps, seconds;
- `submit` of the gold fix on N tasks: seconds, against the graded tests' own run time (the
  submit's `info.runs`: the server runs them `--grade-repeats` times);
- throughput: 8 concurrent sessions, each a gold episode (reset, read, edit, submit) on the
  tasks in turn, episodes per minute.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))

from swe_forge_client import SweForgeEnv  # noqa: E402
from test_agents import gold_agent  # noqa: E402


def summary(xs):
    xs = sorted(xs)
    return {
        "n": len(xs),
        "min": round(xs[0], 4),
        "median": round(statistics.median(xs), 4),
        "max": round(xs[-1], 4),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--resets", type=int, default=10)
    ap.add_argument("--refill", type=float, default=6.0, help="seconds between resets")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--submits", type=int, default=8)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--episodes", type=int, default=2, help="per session, for throughput")
    args = ap.parse_args()
    tasks = [json.loads(l) for l in open(args.tasks, encoding="utf-8") if l.strip()]
    out = {}

    resets = []
    for _ in range(args.resets):
        time.sleep(args.refill)
        env = SweForgeEnv(args.url)
        t = time.perf_counter()
        env.reset(sample=True)
        resets.append(time.perf_counter() - t)
        env.close()
    out["reset_seconds"] = summary(resets)

    env = SweForgeEnv(args.url)
    env.reset(task_id=tasks[0]["instance_id"])
    steps = []
    for _ in range(args.steps):
        t = time.perf_counter()
        r = env.bash("true")
        steps.append(time.perf_counter() - t)
        assert r.observation["exit_code"] == 0, r.observation
    env.close()
    out["bash_true_seconds"] = summary(steps)

    submits, ratios = [], []
    for task in tasks[: args.submits]:
        env = SweForgeEnv(args.url)
        env.reset(task_id=task["instance_id"])
        t = time.perf_counter()
        r = gold_agent(env, task)
        took = time.perf_counter() - t
        assert r.reward == 1.0, (task["instance_id"], r.info)
        runs = sum(run["seconds"] for run in r.info["runs"])
        submits.append(r.info["grade_seconds"])
        ratios.append(r.info["grade_seconds"] / (runs / len(r.info["runs"])))
    out["submit_seconds"] = summary(submits)
    out["submit_over_one_test_run"] = summary(ratios)

    done, errors = [], []

    def worker(k):
        for e in range(args.episodes):
            task = tasks[(k * args.episodes + e) % len(tasks)]
            try:
                with SweForgeEnv(args.url) as env:
                    env.reset(task_id=task["instance_id"])
                    r = gold_agent(env, task)
                    (done if r.reward == 1.0 else errors).append(task["instance_id"])
            except Exception as exc:  # noqa: BLE001 - counted
                errors.append(repr(exc))

    t = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.sessions)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    out["throughput"] = {
        "sessions": args.sessions,
        "episodes": len(done),
        "errors": errors,
        "wall_seconds": round(wall, 1),
        "episodes_per_minute": round(60 * len(done) / wall, 2),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
