#!/usr/bin/env bash
# The Python package (python/) as a user gets it: a fresh virtualenv, the
# pinned test dependencies (python/tests/requirements.txt), `pip install
# ./python` (its build hook compiles the Go binary into the package), the
# platform wheel built with `python -m build --wheel python/`, then pytest:
# run/stream/LiteLLM/cancellation/errors against the simulator, and the
# wheel installed into another fresh virtualenv by test_wheel.py.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python3 -c 'import sys; assert sys.version_info >= (3, 10), "the Python package needs Python 3.10+"'
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  # Debian's python3 leaves venv and pip out; CI installs them.
  if [ "${CI:-}" = true ] && command -v apt-get >/dev/null; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv python3-pip >/dev/null
  else
    echo "tests/python: python3 has no venv/ensurepip: install python3-venv" >&2
    exit 1
  fi
fi
work="$(mktemp -d)"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check -r "$repo/python/tests/requirements.txt"
"$py" -m pip install -q --disable-pip-version-check "$repo/python"
"$py" -m build --wheel --outdir "$work/dist" "$repo/python" >/dev/null
# From outside the clone, so `import massgen` is the installed package.
cd "$work"
env -u MASSGEN_BINARY MASSGEN_WHEEL="$(ls "$work"/dist/*.whl)" "$py" -m pytest -q -p no:warnings "$repo/python/tests"
