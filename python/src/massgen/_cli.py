"""The `massgen` command the wheel installs: it execs the bundled binary."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import BinaryNotFound, find_binary


def main() -> None:
    try:
        exe = find_binary()
    except BinaryNotFound as e:
        print(f"massgen: {e}", file=sys.stderr)
        sys.exit(1)
    if os.name == "nt":  # no exec on Windows: run it and pass its code on
        sys.exit(subprocess.call([exe, *sys.argv[1:]]))
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
