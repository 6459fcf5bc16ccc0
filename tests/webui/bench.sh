#!/usr/bin/env bash
# The Web UI's figures (docs/webui.md): the time from an event in the
# orchestrator to the browser's DOM (p50/p99) over a run with 16 simulated
# agents streaming, and the server's CPU per connected viewer. Starts
# `massgen --web` on a free loopback port with a generated 16-agent team and
# runs bench.mjs (Playwright on Debian's Chromium, plus extra viewers that
# read the event stream). Usage: bash bench.sh [MASSGEN_BINARY] [VIEWERS]
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"
viewers="${2:-8}"
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$chromium" ] || { echo "no chromium (apt-get install -y chromium)"; exit 1; }

work="$(mktemp -d)"
mkdir -p "$work/configs"
{
  echo "# 16 simulated agents, each streaming about 120 words of text before it answers."
  echo "agents:"
  for i in $(seq 1 16); do
    cat <<AGENT
  - id: agent$i
    backend:
      type: sim
      model: sim-$i
      ttft_ms: 100
      tokens_per_second: 40
      scenario:
        models:
          sim-$i:
            steps:
              - text: "$(printf 'Agent %s works through the question step by step, weighing each option against the others before it writes a word of its answer. ' "$i" | head -c 400)$(printf 'Then it checks the result once more. %.0s' 1 2 3 4 5 6 7 8 9 10)"
                answer: "Answer of agent $i."
AGENT
  done
  echo "orchestrator:"
  echo "  max_new_answers_per_agent: 1"
} > "$work/configs/bench16.yaml"

log="$work/web.log"
(cd "$work" && exec "$bin" --web --no-browser --web-port 0 --web-config-dir "$work/configs") 2>"$log" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^massgen web UI: \(http:[^ ]*\)$/\1/p' "$log" | head -n1)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "massgen --web did not start:"; cat "$log"; exit 1; }
(cd "$here" && MASSGEN_WEB_URL="$url" MASSGEN_WEB_PID="$pid" CHROMIUM="$chromium" VIEWERS="$viewers" \
  timeout 600 node bench.mjs)
kill -TERM "$pid"
wait "$pid" || true
trap - EXIT
