"""Shared fixtures: a massgen binary, simulator configs, process checks.

The binary is the installed package's (pip install ./python), else
$MASSGEN_BINARY; outside CI, one is built from this clone when neither
exists. In CI (CI=true) a missing binary fails instead of building.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

# LiteLLM fetches its model price list at import; there is no network here.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def massgen_binary(tmp_path_factory: pytest.TempPathFactory) -> str:
    import massgen

    try:
        found = massgen.find_binary()
        if os.environ.get("CI") == "true":  # CI tests the package as installed, binary included
            assert Path(found).is_relative_to(Path(massgen.__file__).parent), f"not the bundled binary: {found}"
        return found
    except massgen.BinaryNotFound:
        if os.environ.get("CI") == "true":
            raise
        if not shutil.which("go"):
            pytest.skip("no massgen binary (pip install ./python, or set MASSGEN_BINARY) and no Go to build one")
    out = tmp_path_factory.mktemp("bin") / "massgen"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/massgen"], cwd=REPO, check=True)
    os.environ["MASSGEN_BINARY"] = str(out)
    return str(out)


def sim_config(path: Path, steps_by_agent: dict[str, str]) -> Path:
    """A config of sim agents, each scripted by a YAML flow list of steps."""
    body = "agents:\n"
    for agent, steps in steps_by_agent.items():
        body += textwrap.dedent(f"""\
          - id: {agent}
            backend:
              type: sim
              model: sim-{agent}
              scenario:
                models:
                  sim-{agent}:
                    steps: {steps}
        """)
    path.write_text(body)
    return path


@pytest.fixture
def failing_config(tmp_path: Path) -> Path:
    return sim_config(tmp_path / "fail.yaml", {"a": '[{fault: "401"}, {fault: "401"}, {fault: "401"}, {fault: "401"}]'})


@pytest.fixture
def hanging_config(tmp_path: Path) -> Path:
    return sim_config(tmp_path / "hang.yaml", {"a": "[{fault: hang}, {fault: hang}]", "b": "[{fault: hang}, {fault: hang}]"})


@pytest.fixture
def marker() -> str:
    """A unique question, to find the binary's process by its command line."""
    return f"marker-{uuid.uuid4().hex}"


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds marker (zombies excluded)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and state != "Z":
            pids.append(int(d.name))
    return pids


PY = sys.executable


def child_env() -> dict[str, str]:
    """The environment for a child Python that must import this massgen."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
