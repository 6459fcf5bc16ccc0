#!/usr/bin/env bash
# massgen's Web UI: type-checks the page's modules, then end to end: starts `massgen --web --no-browser` on a free
# loopback port in a fresh directory, with the teams of configs/ offered,
# then runs the unit tests of the page's modules and the Playwright tests
# (playwright-core, pinned in package-lock.json) driving Debian's Chromium
# headless. Usage: bash run.sh [MASSGEN_BINARY] (default: builds one).
# Screenshots go to $MASSGEN_SCREENSHOTS (default: a new temporary folder),
# printed by the test.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"

chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$chromium" ]; then
  echo "tests/webui: no chromium (apt-get install -y chromium)"; exit 1
fi

# The page's modules type-checked as TypeScript (JSDoc types; nothing emitted).
(cd "$here" && node_modules/.bin/tsc -p tsconfig.json)

work="$(mktemp -d)"
log="$work/web.log"
# The teams offered: configs/, and one that patches a file of a write
# context path in its final presentation (the page shows the diff).
mkdir -p "$work/configs" "$work/project"
cp "$here"/configs/*.yaml "$work/configs/"
printf 'package main\n\nfunc main() {}\n' > "$work/project/main.go"
sed "s#PROJECT#$work/project#g" "$here/configs/e2e_patch.yaml.in" > "$work/configs/e2e_patch.yaml"
# A run from the command line first: the page lists it from the logs and
# reopens it as a replay of its events.
(cd "$work" && "$bin" --config "$here/configs/e2e_team.yaml" --display silent "Which search suits a sorted slice?" >/dev/null)
(cd "$work" && exec "$bin" --web --no-browser --web-port 0 --web-config-dir "$work/configs") 2>"$log" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true' EXIT

# The UI prints its address (with the launch's token) once it listens.
url=""
for _ in $(seq 1 100); do
  url="$(sed -n 's/^massgen web UI: \(http:[^ ]*\)$/\1/p' "$log" | head -n1)"
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "massgen --web did not start:"; cat "$log"; exit 1
fi

status=0
(cd "$here" && MASSGEN_WEB_URL="$url" MASSGEN_WEB_PID="$pid" CHROMIUM="$chromium" MASSGEN_WORKDIR="$work" \
  timeout 300 node --test --test-concurrency=1 unit.test.mjs e2e.test.mjs) || status=$?

kill -TERM "$pid"
wait "$pid" || { echo "massgen --web exited with $? on SIGTERM:"; cat "$log"; exit 1; }
trap - EXIT
if [ "$status" -ne 0 ]; then
  echo "massgen --web log:"; cat "$log"
fi
exit "$status"
