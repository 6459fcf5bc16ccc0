#!/usr/bin/env bash
# Runs test.mjs (the official `openai` npm client) against a real
# `massgen serve` on a free loopback port. Usage: bash run.sh [MASSGEN_BINARY]
# (default: builds one). Installs the pinned client with `npm ci` first.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"

work="$(mktemp -d)"
log="$work/serve.log"
key="openai-npm-test-key"
(cd "$work" && MASSGEN_SERVER_API_KEY="$key" exec "$bin" serve --host 127.0.0.1 --port 0 \
  --config @examples/sim_three_agents) 2>"$log" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true' EXIT

# The server prints its address once it listens: wait for it, 10 s at most.
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/.*listening on \(http:\/\/[0-9.:]*\).*/\1/p' "$log" | head -n1)"
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "massgen serve did not start:"; cat "$log"; exit 1
fi

status=0
(cd "$here" && MASSGEN_BASE_URL="$url/v1" MASSGEN_API_KEY="$key" timeout 120 node --test) || status=$?

kill -TERM "$pid"
wait "$pid" || { echo "massgen serve exited with $? on SIGTERM:"; cat "$log"; exit 1; }
trap - EXIT
if [ "$status" -ne 0 ]; then
  echo "massgen serve log:"; cat "$log"
fi
exit "$status"
