#!/usr/bin/env bash
# Runs `codex exec` (the Codex CLI, pinned in package-lock.json) with its
# default tools against a real `massgen serve` on a free loopback port: the
# team (one agent on a `massgen sim serve` scripted by scenario.yaml) calls
# Codex's shell tool once, Codex runs the command and sends its output
# back, and the team's next answer ends the task. Usage: bash run.sh
# [MASSGEN_BINARY] (default: builds one). Installs Codex with `npm ci`.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"
sim_models="codex"
source "$here/../serve-sim.sh"

ws="$work/workspace"
mkdir -p "$ws" "$work/codex-home"
status=0
# Codex's own sandbox needs kernel features a CI container may lack: the
# command it runs here is the scenario's echo into the workspace.
(cd "$ws" && HOME="$work/codex-home" CODEX_HOME="$work/codex-home" MASSGEN_API_KEY="$key" timeout 120 \
  "$here/node_modules/.bin/codex" exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
  -c model_provider=massgen \
  -c "model_providers.massgen={name=\"massgen\",base_url=\"$url/v1\",env_key=\"MASSGEN_API_KEY\",wire_api=\"responses\"}" \
  -m massgen/weather-codex "Write massgen-codex-ok into proof.txt." >"$work/codex.out" 2>&1) || status=$?
if [ "$status" -eq 0 ] && [ "$(cat "$ws/proof.txt" 2>/dev/null)" != "massgen-codex-ok" ]; then
  echo "codex exec ended, but its shell tool did not write proof.txt"; status=1
fi
runs="$(grep -c 'msg="run finished".*status=completed' "$serve_log" || true)"
if [ "$status" -eq 0 ] && [ "$runs" -ne 2 ]; then
  echo "want 2 completed runs (the tool call, then the answer), got $runs"; status=1
fi
if [ "$status" -ne 0 ]; then
  echo "codex exec output:"; cat "$work/codex.out"
else
  echo "codex exec: ok (the shell tool ran once; proof.txt written; 2 runs)"; tail -n 5 "$work/codex.out"
fi
stop_serve "$status"
