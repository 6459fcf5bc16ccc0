"""Finding the massgen binary the library runs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_EXE = "massgen.exe" if os.name == "nt" else "massgen"


class BinaryNotFound(FileNotFoundError):
    """No massgen binary: not in the wheel, not in MASSGEN_BINARY, not on PATH."""


def _is_script(path: str) -> bool:
    # The wheel's console entry `massgen` is a Python script that execs the
    # bundled binary; found on PATH it would only call back into us.
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return True


def find_binary() -> str:
    """The binary: the one bundled in the wheel (massgen/bin/massgen), else
    $MASSGEN_BINARY, else `massgen` on PATH (a real binary, not a script)."""
    bundled = Path(__file__).with_name("bin") / _EXE
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    env = os.environ.get("MASSGEN_BINARY")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise BinaryNotFound(f"MASSGEN_BINARY={env} is not an executable file")
        return env
    for d in os.environ.get("PATH", "").split(os.pathsep):
        cand = shutil.which(_EXE, path=d) if d else None
        if cand and not _is_script(cand):
            return cand
    raise BinaryNotFound(
        "no massgen binary: install the platform wheel (pip install massgen, or pip install ./python from a clone), "
        "set MASSGEN_BINARY to a massgen binary, or put one on PATH (go build -o massgen ./cmd/massgen)"
    )
