#!/usr/bin/env bash
# Runs test_clients.py (the official `openai` Python client and
# langchain-openai), test_litellm.py (LiteLLM) and test_llamaindex.py
# (LlamaIndex), pinned in requirements*.txt, with pytest against a real
# `massgen serve` on a free loopback port; the tool round trips run on a
# `massgen sim serve` scripted by scenario.yaml. Usage: bash run.sh
# [MASSGEN_BINARY] (default: builds one). The clients are installed into
# a virtualenv ($MASSGEN_PY_VENV, default .venv here) first; LlamaIndex,
# which needs openai<3, into another one beside it ($MASSGEN_PY_VENV-llamaindex).
set -euo pipefail
source "$(dirname "$0")/../prelude.sh"
venv="${MASSGEN_PY_VENV:-$here/.venv}"
li_venv="$venv-llamaindex"
for v in "$venv:requirements.txt" "$li_venv:requirements-llamaindex.txt"; do
  [ -x "${v%%:*}/bin/python" ] || python3 -m venv "${v%%:*}"
  "${v%%:*}/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/${v#*:}"
done
sim_models="langchain langchain-responses litellm llamaindex"
source "$here/../serve-sim.sh"

status=0
export MASSGEN_BASE_URL="$url/v1" MASSGEN_API_KEY="$key" LITELLM_LOCAL_MODEL_COST_MAP=True
(cd "$here" && timeout 180 "$venv/bin/python" -m pytest -q -p no:cacheprovider test_clients.py test_litellm.py) || status=$?
(cd "$here" && timeout 180 "$li_venv/bin/python" -m pytest -q -p no:cacheprovider test_llamaindex.py) || status=$?
stop_serve "$status"
