"""Upstream's massgen.run arguments and build_config, one test per argument,
and the result's upstream keys — against the simulator."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

import massgen

SIM_TEAM = {"agents": [{"id": "alpha", "backend": {"type": "sim", "model": "sim-a"}},
                       {"id": "beta", "backend": {"type": "sim", "model": "sim-b"}}]}


async def presenter_prompt(query: str, **kw: Any) -> str:
    """The prompt the final presenter got (what its agent was told: system
    message, workspace, context paths), from the run's schema-2 events."""
    async for ev in massgen.stream(query, event_schema=2, **kw):
        if ev["type"] == "final_started":
            return str(ev["text"])
    raise AssertionError("no final presentation")


# --- the team -----------------------------------------------------------


def test_query_must_be_a_question() -> None:
    with pytest.raises(ValueError, match=r"massgen\.run_sync\(query=…\)"):
        massgen.run_sync("   ", model="sim-x", backend="sim")


def test_config(tmp_path: Path) -> None:
    r = massgen.run_sync("q?", config="@examples/sim_single_agent", cwd=tmp_path)
    assert r["status"] == "completed" and r["config_used"] == "@examples/sim_single_agent"


def test_config_dict(tmp_path: Path) -> None:
    team = json.loads(json.dumps(SIM_TEAM))
    r = massgen.run_sync("What is 2+2?", config_dict=team, cwd=tmp_path)
    assert r["status"] == "completed" and set(r["usage_by_agent"]) == {"alpha", "beta"}
    assert r["config_used"] == "config_dict" and team == SIM_TEAM  # the caller's dict is untouched
    bad = {"agents": [{"id": "a", "backend": {"type": "sim", "model": "x"}}], "orchestrator": {"voting_sensitivity": "nope"}}
    with pytest.raises(massgen.ConfigError) as e:
        massgen.run_sync("q", config_dict=bad, cwd=tmp_path)
    assert "config_dict:" in str(e.value) and "<stdin>" not in str(e.value)
    with pytest.raises(TypeError, match=r"config_dict=…\): a dict"):
        massgen.run_sync("q", config_dict=["not", "a", "dict"])


def test_model(tmp_path: Path) -> None:
    r = massgen.run_sync("q?", model="sim-x", backend="sim", cwd=tmp_path)
    assert r["status"] == "completed" and r["selected_agent"] == "agent_a"
    assert r["config_used"] == "agent:sim-xx1"
    # enable_filesystem defaults to True: the agent had a workspace.
    assert list((tmp_path / ".massgen" / "workspaces").glob("*/agent_a"))


def test_models(tmp_path: Path) -> None:
    r = massgen.run_sync("q?", models=["sim/alpha", "sim/beta"], cwd=tmp_path)
    assert set(r["usage_by_agent"]) == {"agent_a", "agent_b"} and r["config_used"] == "multi-agent:sim/alpha,sim/beta"


def test_num_agents(tmp_path: Path) -> None:
    r = massgen.run_sync("q?", model="sim-x", backend="sim", num_agents=3, cwd=tmp_path)
    assert set(r["usage_by_agent"]) == {"agent_a", "agent_b", "agent_c"}
    with pytest.raises(ValueError, match=r"num_agents=0\): a whole number from 1 to 10"):
        massgen.run_sync("q", model="sim-x", backend="sim", num_agents=0)
    with pytest.raises(ValueError, match=r"num_agents=2\) goes with model="):
        massgen.run_sync("q", config="@examples/sim_single_agent", num_agents=2)


def test_one_team_only() -> None:
    with pytest.raises(ValueError, match=r"one way .* not config= and model="):
        massgen.run_sync("q", config="@examples/sim_single_agent", model="sim-x")


def test_use_docker(tmp_path: Path, massgen_binary: str) -> None:
    cfg = massgen.build_config(model="sim/sim-x", num_agents=2, use_docker=True)
    for a in cfg["agents"]:
        assert a["backend"]["command_line_execution_mode"] == "docker" and a["backend"]["enable_mcp_command_line"] is True
    f = tmp_path / "docker.json"
    f.write_text(json.dumps(cfg))
    v = subprocess.run([massgen_binary, "config", "validate", str(f)], capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and "valid" in v.stdout + v.stderr, v.stderr
    with pytest.raises(ValueError, match=r"use_docker=…\) shapes the team"):
        massgen.run_sync("q", config="@examples/sim_single_agent", use_docker=True)


async def test_enable_filesystem(tmp_path: Path) -> None:
    with_fs = await presenter_prompt("q?", model="sim-x", backend="sim", num_agents=2, cwd=tmp_path)
    assert "Your workspace is" in with_fs
    without = await presenter_prompt("q?", model="sim-x", backend="sim", num_agents=2, enable_filesystem=False, cwd=tmp_path)
    assert "workspace" not in without.lower()
    (tmp_path / "light").mkdir()
    r = await massgen.run("q?", model="sim-x", backend="sim", enable_filesystem=False, cwd=tmp_path / "light")
    assert r["status"] == "completed" and not (tmp_path / "light" / ".massgen" / "workspaces").exists()


def test_enable_logging(tmp_path: Path) -> None:
    r = massgen.run_sync("q?", config="@examples/sim_single_agent", enable_logging=False, cwd=tmp_path)
    assert r["log_directory"] is None and r["session_id"] is None
    assert not (tmp_path / ".massgen" / "massgen_logs").exists()


def test_output_file(tmp_path: Path) -> None:
    out = tmp_path / "answer.md"
    r = massgen.run_sync("q?", config="@examples/sim_single_agent", output_file=out, cwd=tmp_path)
    assert out.read_text().strip() == r["final_answer"].strip()


def test_verbose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    massgen.run_sync("q?", config="@examples/sim_three_agents", verbose=True, cwd=tmp_path)
    out = capsys.readouterr().out
    for want in ("massgen: run started", "answered agent1.1", "voted for", "winner:", "massgen: run completed"):
        assert want in out, out
    massgen.run_sync("q?", config="@examples/sim_three_agents", cwd=tmp_path)
    assert capsys.readouterr().out == ""  # quiet by default, as upstream


def test_conversation_history(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "My name is Bobbinsky."}, {"role": "assistant", "content": "Hello Bobbinsky."}]
    r = massgen.run_sync("What is my name?", config="@examples/sim_single_agent", conversation_history=history, cwd=tmp_path)
    contexts = list(Path(r["log_directory"]).glob("agent_*/*/context.txt"))
    assert contexts and all("Bobbinsky" in c.read_text() for c in contexts)
    with pytest.raises(ValueError, match=r"conversation_history=…\)\[0\]: role 'system'"):
        massgen.run_sync("q", config="@examples/sim_single_agent", conversation_history=[{"role": "system", "content": "x"}])
    with pytest.raises(ValueError, match="same argument"):
        massgen.run_sync("q", config="@examples/sim_single_agent", conversation_history=history, history=history)


async def test_parse_at_references(tmp_path: Path) -> None:
    (tmp_path / "note.txt").write_text("the recipe")
    kw: dict[str, Any] = {"model": "sim-x", "backend": "sim", "num_agents": 2, "cwd": tmp_path}
    shared = await presenter_prompt("Summarise @note.txt", parse_at_references=True, **kw)
    assert f"Context path (read-only): {tmp_path / 'note.txt'}" in shared
    left = await presenter_prompt("Summarise @note.txt", **kw)  # upstream's default: False
    assert "Context path" not in left and "@note.txt" in left


async def test_system_message(tmp_path: Path) -> None:
    prompt = await presenter_prompt("q?", model="sim-x", backend="sim", num_agents=2, system_message="You are SYSMSG-42.", cwd=tmp_path)
    assert "You are SYSMSG-42." in prompt
    with pytest.raises(ValueError, match=r"system_message=…\) goes with model="):
        massgen.run_sync("q", config="@examples/sim_single_agent", system_message="x")


async def test_base_url(tmp_path: Path, massgen_binary: str) -> None:
    log = tmp_path / "sim.log"
    with log.open("w") as logf:
        sim = subprocess.Popen([massgen_binary, "sim", "serve", "--addr", "127.0.0.1:0"], stderr=logf, start_new_session=True)
    try:
        base = None
        for _ in range(300):  # bounded: 30 s
            m = re.search(r"serving at (http://\S+/v1)", log.read_text())
            if m:
                base = m.group(1)
                break
            await asyncio.sleep(0.1)
        assert base, log.read_text()
        r = await massgen.run("q?", model="m-remote", backend="chatcompletion", base_url=base, cwd=tmp_path)
        assert r["status"] == "completed" and "m-remote" in r["final_answer"]
        assert "outcome=completed" in log.read_text()
    finally:
        os.killpg(sim.pid, signal.SIGTERM)
        sim.wait(timeout=30)


async def test_context_paths(tmp_path: Path) -> None:
    (tmp_path / "ref").mkdir()
    prompt = await presenter_prompt("q?", model="sim-x", backend="sim", num_agents=2, cwd=tmp_path,
                                    context_paths=[{"path": str(tmp_path / "ref"), "permission": "read"}])
    assert f"Context path (read-only): {tmp_path / 'ref'}" in prompt
    with pytest.raises(ValueError, match=r"context_paths=…\) goes with model="):
        massgen.run_sync("q", config="@examples/sim_single_agent", context_paths=["x"])


def test_timeout() -> None:
    with pytest.raises(ValueError, match=r"timeout=-1\): a positive number of seconds"):
        massgen.run_sync("q", config="@examples/sim_single_agent", timeout=-1)


def test_session_id(tmp_path: Path) -> None:
    first = massgen.run_sync("My name is Bobbinsky.", config="@examples/sim_single_agent", cwd=tmp_path)
    assert first["session_id"].startswith("session_")
    second = massgen.run_sync("What is my name?", config="@examples/sim_single_agent", session_id=first["session_id"], cwd=tmp_path)
    assert second["session_id"] == first["session_id"]
    contexts = list(Path(second["log_directory"]).glob("agent_*/*/context.txt"))
    assert contexts and all("Bobbinsky" in c.read_text() for c in contexts)


def test_unknown_keyword_is_named() -> None:
    with pytest.raises(TypeError) as e:
        massgen.run_sync("q", config="@examples/sim_single_agent", histroy=[])
    msg = str(e.value)
    assert msg.startswith("massgen.run_sync() got an unexpected keyword argument 'histroy'") and "'history'" in msg
    assert "command()" not in msg


def test_errors_name_arguments_not_flags(tmp_path: Path) -> None:
    # The binary checks the deadline as its --orchestrator-timeout flag; the
    # caller set timeout=.
    with pytest.raises(massgen.ConfigError) as e:
        massgen.run_sync("q", model="sim-x", backend="sim", timeout=1e12, cwd=tmp_path)
    assert str(e.value).startswith("timeout= must be at most 31536000 seconds") and "--" not in str(e.value), str(e.value)
    with pytest.raises(massgen.ConfigError) as e:
        massgen.run_sync("q", model="sim-x", backend="nosuchbackend", enable_filesystem=False, cwd=tmp_path)
    assert "nosuchbackend" in str(e.value) and "--" not in str(e.value), str(e.value)


# --- the result ---------------------------------------------------------


def test_result_has_upstreams_keys(tmp_path: Path) -> None:
    r = massgen.run_sync("What is the capital of France?", config="@examples/sim_three_agents", cwd=tmp_path)
    assert r["log_directory"] == r["log_dir"] and Path(r["log_directory"]).is_dir()
    assert r["session_id"].startswith("session_") and r["selected_agent"] == r["winner"]
    vr = r["vote_results"]
    assert vr["vote_counts"] == {k: v for k, v in r["votes"].items() if v} and vr["winner"] == r["winner"]
    assert vr["total_votes"] == sum(vr["vote_counts"].values()) == sum(len(v) for v in vr["voter_details"].values())
    assert vr["is_tie"] is False and set(vr["agent_mapping"].values()) <= {"researcher", "critic", "writer"}
    for target, voters in vr["voter_details"].items():
        assert target in vr["vote_counts"] and all(v["voter"] and v["reason"] for v in voters)
    for a in r["answers"]:
        assert a["label"] and a["agent_id"] == a["agent"]
        assert (Path(a["answer_path"]) / "answer.txt").read_text().strip() == a["content"].strip()
    u = r["usage"]
    assert u["prompt_tokens"] == u["input_tokens"] and u["completion_tokens"] == u["output_tokens"]
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]


# --- build_config -------------------------------------------------------


def test_build_config_defaults_to_two_gpt5_agents() -> None:
    cfg = massgen.build_config()
    assert [a["id"] for a in cfg["agents"]] == ["agent_a", "agent_b"]
    assert all(a["backend"] == {"type": "openai", "model": "gpt-5", "cwd": "workspace"} for a in cfg["agents"])


def test_build_config_model_backend_and_num_agents() -> None:
    cfg = massgen.build_config(num_agents=3, model="sim-x", backend="sim")
    assert [a["backend"]["type"] for a in cfg["agents"]] == ["sim"] * 3
    assert massgen.build_config(model="groq/llama-3.3-70b")["agents"][0]["backend"]["type"] == "groq"
    assert "type" not in massgen.build_config(model="gpt-5-mini")["agents"][0]["backend"]  # the binary infers it
    with pytest.raises(ValueError, match=r"massgen\.build_config\(num_agents=11\)"):
        massgen.build_config(num_agents=11, model="gpt-5")


def test_build_config_models_and_backends() -> None:
    cfg = massgen.build_config(models=["openai/gpt-5", "claude-sonnet-4-5"], backends=["openai", "claude"])
    assert [(a["backend"]["type"], a["backend"]["model"]) for a in cfg["agents"]] == [("openai", "gpt-5"), ("claude", "claude-sonnet-4-5")]
    with pytest.raises(ValueError, match=r"models=…\)\[1\]"):
        massgen.build_config(models=["gpt-5", ""])


def test_build_config_context_paths(tmp_path: Path) -> None:
    cfg = massgen.build_config(model="sim/x", context_paths=[str(tmp_path), {"path": "/ref", "permission": "read"}])
    assert cfg["orchestrator"]["context_paths"] == [{"path": str(tmp_path), "permission": "write"},
                                                    {"path": "/ref", "permission": "read"}]
    with pytest.raises(ValueError, match=r"context_paths=…\)\[0\]: permission 'rw'"):
        massgen.build_config(context_paths=[{"path": "/x", "permission": "rw"}])


def test_build_config_runs(tmp_path: Path) -> None:
    r = massgen.run_sync("q?", config_dict=massgen.build_config(model="sim/sim-x", num_agents=2), cwd=tmp_path)
    assert r["status"] == "completed" and set(r["usage_by_agent"]) == {"agent_a", "agent_b"}
