#!/usr/bin/env bash
# Runs test.mjs (the AI SDK and the OpenAI Agents SDK) against a real
# `massgen serve` on a free loopback port, whose teams for the tool round
# trips are one agent each on a `massgen sim serve` scripted by
# scenario.yaml. Usage: bash run.sh [MASSGEN_BINARY] (default: builds one).
# Installs the pinned clients with `npm ci` first.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"
sim_models="ai-sdk agents-run agents-stream"
source "$here/../serve-sim.sh"

status=0
(cd "$here" && MASSGEN_BASE_URL="$url/v1" MASSGEN_API_KEY="$key" timeout 120 node --test) || status=$?
stop_serve "$status"
