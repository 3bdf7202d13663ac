#!/usr/bin/env bash
# The latency of a reset, GET /health and another session's `bash true` while one session's
# `bash` call sleeps 15 s (BENCHMARKS.md, "serve under load").
# usage: tests/harness/serve_latency.sh BIN TASKS.jsonl
#   BIN: the swe-forge binary; TASKS: a local run's tasks (served with --unsafe-local).
set -u
BIN=$1
TASKS=$2
WORK=$(mktemp -d)
"$BIN" serve --tasks "$TASKS" --addr 127.0.0.1:0 --sandbox local --unsafe-local --pool 0 \
  --db "$WORK/serve.db" > "$WORK/out" 2> "$WORK/err" &
SERVER=$!
for _ in $(seq 100); do grep -q listening "$WORK/out" && break; sleep 0.2; done
URL=$(sed -n 's/listening on //p' "$WORK/out")
reset() {
  curl -s -X POST -H 'Content-Type: application/json' -d '{}' "$URL/reset" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["observation"]["session_id"])'
}
step() {
  curl -s -o /dev/null -w '%{time_total}' -X POST -H 'Content-Type: application/json' \
    -d "{\"session_id\": \"$1\", \"action\": {\"tool\": \"bash\", \"arguments\": {\"command\": \"$2\"}}}" \
    "$URL/step"
}
A=$(reset)
B=$(reset)
step "$A" 'sleep 15' > /dev/null &
SLEEPER=$!
sleep 1
R=$(curl -s -o /dev/null -w '%{time_total}' -X POST -H 'Content-Type: application/json' -d '{}' "$URL/reset")
H=$(curl -s -o /dev/null -w '%{time_total}' "$URL/health")
Q=$(step "$B" true)
echo "reset ${R}s  health ${H}s  other session's bash true ${Q}s (while session A sleeps 15 s)"
wait "$SLEEPER"
kill "$SERVER"
wait "$SERVER" 2> /dev/null
rm -rf "$WORK"
