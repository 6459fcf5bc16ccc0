"""The platform wheel: it carries the binary, installs into a fresh
virtualenv, and its `massgen` command runs.

$MASSGEN_WHEEL names a built wheel (.ci/run builds one with
`python -m build --wheel python/`); without it the wheel is built here.
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import PY, REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MASSGEN_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([PY, "-m", "build", "--wheel", "--outdir", str(out), str(REPO / "python")], check=True,
                   stdout=subprocess.DEVNULL)
    (whl,) = out.glob("*.whl")
    return whl


def test_wheel_is_platform_specific_and_carries_the_binary(wheel: Path) -> None:
    tag = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert wheel.name.endswith(f"-py3-none-{tag}.whl"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = z.getinfo("massgen/bin/massgen")
        wheel_meta = next(z.read(n).decode() for n in names if n.endswith(".dist-info/WHEEL"))
    assert {"massgen/__init__.py", "massgen/py.typed", "massgen/litellm_provider.py"} <= names
    assert info.external_attr >> 16 & 0o111, "the binary must be executable"
    assert "Root-Is-Purelib: false" in wheel_meta


def test_wheel_installs_into_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", str(venv)], check=True)
    bindir = venv / "bin"
    subprocess.run([bindir / "python", "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("MASSGEN_BINARY", "PYTHONPATH")}
    env["PATH"] = f"{bindir}{os.pathsep}/usr/bin:/bin"

    version = subprocess.run([bindir / "massgen", "--version"], capture_output=True, text=True, env=env, check=True)
    assert "0.1.0" in version.stdout, version.stdout

    found = subprocess.run([bindir / "python", "-c", "import massgen; print(massgen.find_binary())"],
                           capture_output=True, text=True, env=env, check=True, cwd=tmp_path)
    assert Path(found.stdout.strip()).is_relative_to(venv), found.stdout

    run = subprocess.run([bindir / "python", "-c",
                          "import massgen; print(massgen.run_sync('q?', config='@examples/sim_single_agent', "
                          "enable_logging=False)['final_answer'])"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0 and "Answer 1 to: q?" in run.stdout, run.stderr
