"""Failed runs raise exceptions naming the agent, provider and status."""

from __future__ import annotations

from pathlib import Path

import pytest

import massgen
from conftest import sim_config


async def test_all_agents_failing_raises_execution_error(tmp_path: Path, failing_config: Path) -> None:
    with pytest.raises(massgen.ExecutionError) as ei:
        await massgen.run("hi", config=failing_config, cwd=tmp_path)
    e = ei.value
    assert (e.agent, e.provider, e.model, e.status, e.exit_code, e.kind) == ("a", "sim", "sim-a", 401, 2, "failed")
    assert (e.failure, e.retryable) == ("auth", False)
    assert "401" in str(e) and "agent=a" in str(e)
    assert e.log_dir and Path(e.log_dir).is_dir()


async def test_stream_yields_errors_then_raises(tmp_path: Path, failing_config: Path) -> None:
    seen = []
    with pytest.raises(massgen.MassGenError):
        async for ev in massgen.stream("hi", config=failing_config, cwd=tmp_path):
            seen.append(ev)
    errs = [e for e in seen if e["type"] == "agent_error"]
    assert errs and errs[0]["error"]["status"] == 401 and errs[0]["agent"] == "a"
    assert errs[0]["error"]["failure"] == "auth"
    assert seen[-1]["type"] == "finished" and seen[-1]["status"] == "failed"


def test_missing_config_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(massgen.ConfigError) as ei:
        massgen.run_sync("hi", config=tmp_path / "missing.yaml", cwd=tmp_path)
    assert ei.value.exit_code == 1 and "missing.yaml" in str(ei.value)
    assert isinstance(ei.value, ValueError)


def test_unknown_backend_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(massgen.ConfigError):
        massgen.run_sync("hi", model="x", backend="no-such-backend", cwd=tmp_path)


def test_deadline_without_an_answer_raises_timeout(tmp_path: Path) -> None:
    cfg = sim_config(tmp_path / "slow.yaml", {"a": "[{fault: hang}]"})
    with pytest.raises(massgen.RunTimeoutError) as ei:
        massgen.run_sync("hi", config=cfg, timeout=1, cwd=tmp_path)
    assert ei.value.exit_code == 3 and isinstance(ei.value, TimeoutError)


def test_binary_not_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import massgen._binary as b

    monkeypatch.setattr(b, "__file__", str(tmp_path / "massgen" / "_binary.py"))  # no bundled binary
    monkeypatch.setenv("MASSGEN_BINARY", str(tmp_path / "nope"))
    with pytest.raises(massgen.BinaryNotFound, match="MASSGEN_BINARY"):
        massgen.find_binary()
    monkeypatch.delenv("MASSGEN_BINARY")
    script = tmp_path / "massgen"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # only the console-entry script: skipped
    with pytest.raises(massgen.BinaryNotFound, match="no massgen binary"):
        massgen.find_binary()


async def test_stream_in_the_one_schema(tmp_path: Path, failing_config: Path) -> None:
    seen = []
    with pytest.raises(massgen.ExecutionError) as ei:
        async for ev in massgen.stream("hi", config=failing_config, cwd=tmp_path, event_schema=2):
            seen.append(ev)
    assert all(ev["v"] == massgen.EVENT_SCHEMA for ev in seen)
    failed = [ev for ev in seen if ev["type"] == "turn_failed"]
    assert failed and failed[0]["failure"]["kind"] == "auth" and failed[0]["failure"]["status"] == 401
    assert seen[-1]["type"] == "finished" and seen[-1]["status"] == "failed"
    e = ei.value
    assert (e.agent, e.provider, e.status, e.failure, e.exit_code) == ("a", "sim", 401, "auth", 2)
