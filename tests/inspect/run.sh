#!/usr/bin/env bash
# inspect-ai (pinned in requirements.txt) evaluating `massgen serve` as an
# OpenAI-compatible model: task.py's four questions of quiz.jsonl, scored
# with inspect's match(), through its openai-api provider
# (openai-api/massgen/<model>, MASSGEN_BASE_URL and MASSGEN_API_KEY). The
# server serves configs/ (simulated agents whose answers quality.yaml
# fixes): massgen/team is right on every item and must score accuracy
# 1.0, massgen/wrong never is and must score 0.0. Usage: bash run.sh
# [MASSGEN_BINARY] (default: builds one). inspect-ai is installed into a
# virtualenv first: $MASSGEN_INSPECT_VENV, default
# ${XDG_CACHE_HOME:-~/.cache}/massgen/inspect-venv.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"
venv="${MASSGEN_INSPECT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/massgen/inspect-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"

work="$(mktemp -d)"
key="inspect-test-key"
(cd "$work" && MASSGEN_SERVER_API_KEY="$key" exec "$bin" serve --host 127.0.0.1 --port 0 \
  --config-dir "$here/configs" --no-logs --no-store) 2>"$work/serve.log" &
serve=$!
trap 'kill -TERM "$serve" 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/.*listening on \(http:\/\/[0-9.:]*\).*/\1/p' "$work/serve.log" | head -n1)"
  [ -n "$url" ] && break
  kill -0 "$serve" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "massgen serve did not start:"; cat "$work/serve.log"; exit 1
fi

status=0
# eval MODEL WANT: inspect eval of task.py against massgen/MODEL; its
# accuracy must be WANT.
eval_model() {
  local start=$EPOCHREALTIME
  (cd "$here" && MASSGEN_BASE_URL="$url/v1" MASSGEN_API_KEY="$key" timeout 300 "$venv/bin/inspect" eval task.py \
    --model "openai-api/massgen/massgen/$1" --log-dir "$work/logs-$1" --log-format json --display none --no-log-realtime) || return 1
  "$venv/bin/python" - "$work/logs-$1" "$2" "$start" "$EPOCHREALTIME" "$1" <<'PY'
import glob, sys
took = float(sys.argv[4]) - float(sys.argv[3])
from inspect_ai.log import read_eval_log
logs = glob.glob(sys.argv[1] + "/*.json")
assert len(logs) == 1, f"expected one log, found {logs}"
log = read_eval_log(logs[0])
assert log.status == "success", f"eval status {log.status}: {log.error}"
acc = log.results.scores[0].metrics["accuracy"].value
n = log.results.completed_samples
print(f"inspect eval massgen/{sys.argv[5]}: {n} samples, accuracy {acc:.3f} (want {float(sys.argv[2]):.3f}), {took:.1f} s")
assert n == 4, f"{n} samples completed, want 4"
assert abs(acc - float(sys.argv[2])) < 1e-9, "accuracy differs"
PY
}
eval_model team 1.0 || status=$?
eval_model wrong 0.0 || status=$?

kill -TERM "$serve"
wait "$serve" || { echo "massgen serve exited with $? on SIGTERM:"; cat "$work/serve.log"; exit 1; }
if [ "$status" -ne 0 ]; then
  echo "massgen serve log:"; cat "$work/serve.log"
fi
exit "$status"
