#!/usr/bin/env bash
# Runs test.mjs (the official MCP TypeScript client, @modelcontextprotocol/sdk)
# against `massgen mcp` over stdio and streamable HTTP. Usage:
# bash run.sh [MASSGEN_BINARY] (default: builds one). Installs the pinned
# client with `npm ci` first. The hanging team is in a directory of its own,
# massgen mcp's --config-dir (massgen_run names it by file name); over HTTP
# test.mjs sends the API key massgen mcp made at its start.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"

# A simulator whose every request hangs, for the cancellation tests: its log
# has one line per request, with the request's outcome.
work="$(mktemp -d)"
printf 'models:\n  "*":\n    always: {fault: hang}\n' > "$work/hang_scenario.yaml"
"$bin" sim serve --addr 127.0.0.1:0 --scenario "$work/hang_scenario.yaml" 2>"$work/sim.log" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true' EXIT
base=""
for _ in $(seq 1 100); do
  base="$(sed -n 's/.*serving at \(http:\/\/[0-9.:]*\/v1\).*/\1/p' "$work/sim.log" | head -n1)"
  [ -n "$base" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$base" ]; then
  echo "massgen sim serve did not start:"; cat "$work/sim.log"; exit 1
fi
mkdir "$work/teams"
cat > "$work/teams/hang.yaml" <<YAML
agents:
  - {id: a, backend: {type: chatcompletion, model: m-a, base_url: "$base"}}
  - {id: b, backend: {type: chatcompletion, model: m-b, base_url: "$base"}}
YAML

status=0
(cd "$here" && MASSGEN_BIN="$bin" HANG_CONFIG="$work/teams/hang.yaml" SIM_LOG="$work/sim.log" timeout 300 node --test) || status=$?
if [ "$status" -ne 0 ]; then
  echo "simulator log:"; cat "$work/sim.log"
fi
exit "$status"
