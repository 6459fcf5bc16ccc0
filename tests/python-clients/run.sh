#!/usr/bin/env bash
# Runs test_clients.py (the official `openai` Python client and
# langchain-openai, pinned in requirements.txt) with pytest against a real
# `massgen serve` on a free loopback port; the tool round trips run on a
# `massgen sim serve` scripted by scenario.yaml. Usage: bash run.sh
# [MASSGEN_BINARY] (default: builds one). The clients are installed into
# a virtualenv ($MASSGEN_PY_VENV, default .venv here) first.
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"
venv="${MASSGEN_PY_VENV:-$here/.venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
sim_models="langchain langchain-responses"
source "$here/../serve-sim.sh"

status=0
(cd "$here" && MASSGEN_BASE_URL="$url/v1" MASSGEN_API_KEY="$key" timeout 180 "$venv/bin/python" -m pytest -q -p no:cacheprovider test_clients.py) || status=$?
stop_serve "$status"
