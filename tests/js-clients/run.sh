#!/usr/bin/env bash
# Runs test.mjs (the AI SDK and the OpenAI Agents SDK) against a real
# `massgen serve` on a free loopback port, whose teams are one agent each
# on a `massgen sim serve` scripted by scenario.yaml. Usage: bash run.sh
# [MASSGEN_BINARY] (default: builds one). Installs the pinned clients with
# `npm ci` first.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"

work="$(mktemp -d)"
key="js-clients-test-key"
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done' EXIT

# wait_url LOG PATTERN PID: the URL a server prints once it listens (10 s at most).
wait_url() {
  local url=""
  for _ in $(seq 1 100); do
    url="$(sed -n "s/.*$2 \(http:\/\/[0-9.:]*\).*/\1/p" "$1" | head -n1)"
    [ -n "$url" ] && break
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "server did not start:" >&2; cat "$1" >&2; return 1
  fi
  echo "$url"
}

"$bin" sim serve --addr 127.0.0.1:0 --scenario "$here/scenario.yaml" 2>"$work/sim.log" &
pids+=($!)
sim="$(wait_url "$work/sim.log" "serving at" "${pids[0]}")/v1"

mkdir "$work/configs"
for m in ai-sdk agents-run agents-stream; do
  printf 'agent: {id: solo, backend: {type: chatcompletion, model: sim-%s, base_url: "%s"}}\n' "$m" "$sim" \
    > "$work/configs/weather-$m.yaml"
done
(cd "$work" && MASSGEN_SERVER_API_KEY="$key" exec "$bin" serve --host 127.0.0.1 --port 0 \
  --config @examples/sim_three_agents --config-dir "$work/configs" --no-logs) 2>"$work/serve.log" &
pids+=($!)
url="$(wait_url "$work/serve.log" "listening on" "${pids[1]}")"

status=0
(cd "$here" && MASSGEN_BASE_URL="$url/v1" MASSGEN_API_KEY="$key" timeout 120 node --test) || status=$?

kill -TERM "${pids[1]}"
wait "${pids[1]}" || { echo "massgen serve exited with $? on SIGTERM:"; cat "$work/serve.log"; exit 1; }
if [ "$status" -ne 0 ]; then
  echo "massgen serve log:"; cat "$work/serve.log"
fi
exit "$status"
