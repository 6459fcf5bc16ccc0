"""Build hook: compile the Go binary into the wheel, the way ruff and uv ship theirs.

The wheel is platform-specific (py3-none-<platform>): it carries
massgen/bin/massgen, built from the repository this folder lives in. Set
MASSGEN_GO to choose the go command (default: `go` on PATH).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _platform_tag() -> str:
    # "linux-x86_64" -> "linux_x86_64"; macOS and Windows keep the same rule.
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


class CustomBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        repo = Path(self.root).resolve().parent
        if not (repo / "cmd" / "massgen").is_dir():
            raise RuntimeError(
                f"massgen: {repo} holds no cmd/massgen: build the wheel from a clone of the repository "
                "(pip install ./python), where the Go sources are"
            )
        go = os.environ.get("MASSGEN_GO") or shutil.which("go")
        if not go:
            raise RuntimeError("massgen: the wheel carries the Go binary, and `go` is not on PATH: install Go 1.26")
        self._tmp = tempfile.mkdtemp(prefix="massgen-wheel-")
        exe = "massgen.exe" if os.name == "nt" else "massgen"
        out = os.path.join(self._tmp, exe)
        env = dict(os.environ, CGO_ENABLED="0")
        env.setdefault("GOFLAGS", "-buildvcs=false")
        ldflags = f"-s -w -X github.com/massgen/massgen/internal/app.Version={self.metadata.version}"
        subprocess.run([go, "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/massgen"], cwd=repo, env=env, check=True)
        build_data["force_include"][out] = f"massgen/bin/{exe}"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{_platform_tag()}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
