"""massgen.run, run_sync and stream against the simulator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import massgen


async def test_run_three_sim_agents(tmp_path: Path) -> None:
    r = await massgen.run("What is the capital of France?", config="@examples/sim_three_agents", cwd=tmp_path)
    assert r["status"] == "completed"
    assert "What is the capital of France?" in r["final_answer"]
    assert r["winner"] in ("researcher", "critic", "writer") and r["selected_agent"] == r["winner"]
    assert sum(r["votes"].values()) == 3 and r["votes"][r["winner"]] == max(r["votes"].values())
    assert r["usage"]["input_tokens"] > 0 and r["usage"]["output_tokens"] > 0
    assert r["usage"]["total_tokens"] == r["usage"]["input_tokens"] + r["usage"]["output_tokens"]
    assert set(r["usage_by_agent"]) == {"researcher", "critic", "writer"}
    assert isinstance(r["cost"], (int, float))
    assert len(r["answers"]) >= 3 and {a["agent"] for a in r["answers"]} == {"researcher", "critic", "writer"}
    log_dir = Path(r["log_dir"])
    assert log_dir.is_dir() and log_dir.is_relative_to(tmp_path)
    assert Path(r["final_answer_path"]).read_text().strip() == r["final_answer"].strip()
    assert r["config_used"] == "@examples/sim_three_agents"


def test_run_sync_with_models_and_history(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "My name is Bobbinsky."}, {"role": "assistant", "content": "Hello Bobbinsky."}]
    r = massgen.run_sync("What is my name?", models=["sim/alpha", "sim/beta"], history=history, cwd=tmp_path)
    # Upstream's build_config team: agent_a, agent_b, each with a workspace.
    assert r["status"] == "completed" and r["winner"] in ("agent_a", "agent_b")
    assert set(r["usage_by_agent"]) == {"agent_a", "agent_b"}
    # Every agent's turn saw the history: the logs keep each turn's context.
    contexts = list(Path(r["log_dir"]).glob("agent_*/*/context.txt"))
    assert contexts and all("Bobbinsky" in c.read_text() for c in contexts)


async def test_run_sync_inside_a_running_loop(tmp_path: Path) -> None:
    # A notebook has a loop running; run_sync must still work there.
    r = massgen.run_sync("q?", model="sim-solo", backend="sim", enable_logging=False, cwd=tmp_path)
    assert r["status"] == "completed" and r["log_dir"] is None


async def test_stream_yields_the_runs_events_in_order(tmp_path: Path) -> None:
    seen = [ev async for ev in massgen.stream("Why is the sky blue?", config="@examples/sim_three_agents", cwd=tmp_path)]
    types = [e["type"] for e in seen]
    assert types[0] == "run_started" and types[-1] == "finished" and types.count("finished") == 1
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
    assert all(e["v"] == massgen.STREAM_VERSION for e in seen)
    for t in ("agent_started", "answer", "vote", "winner", "final_started", "final_answer", "turn_ended"):
        assert t in types, t
    assert types.index("winner") < types.index("final_answer") < types.index("finished")
    assert {a["id"] for a in seen[0]["agents"]} == {"researcher", "critic", "writer"}
    fin = seen[-1]
    final = next(e for e in seen if e["type"] == "final_answer")
    assert fin["final_answer"] == final["text"] and fin["winner"] == final["agent"]
    deltas = "".join(e["text"] for e in seen if e["type"] == "final_delta")
    assert final["text"].startswith(deltas)  # deltas may be skipped at the end, never reordered


async def test_breaking_out_of_stream_stops_the_run(tmp_path: Path, hanging_config: Path, marker: str) -> None:
    from conftest import processes_with

    agen = massgen.stream(marker, config=hanging_config, cwd=tmp_path)
    async for ev in agen:
        if ev["type"] == "agent_started":
            assert processes_with(marker)
            break
    await agen.aclose()
    assert processes_with(marker) == []


def test_bad_arguments_raise_before_starting() -> None:
    with pytest.raises(ValueError, match="role"):
        massgen.run_sync("q", models=["sim/a"], history=[{"role": "system", "content": "x"}])
    with pytest.raises(ValueError, match="non-empty"):
        massgen.run_sync("  ", models=["sim/a"])
    with pytest.raises(ValueError, match="positive"):
        massgen.run_sync("q", models=["sim/a"], timeout=0)


def test_console_entry_runs_the_binary(massgen_binary: str) -> None:
    import subprocess

    from conftest import PY, child_env

    out = subprocess.run([PY, "-m", "massgen", "--version"], capture_output=True, text=True, check=True, env=child_env())
    assert "massgen" in out.stdout.lower() and out.stdout.strip()
    ev = subprocess.run([PY, "-m", "massgen", "--stream-events", "--no-logs", "--models", "sim/a", "q"],
                        capture_output=True, text=True, check=True, env=child_env())
    assert json.loads(ev.stdout.splitlines()[-1])["status"] == "completed"


def test_stream_is_an_async_iterator() -> None:
    it = massgen.stream("q", models=["sim/a"], enable_logging=False)
    assert hasattr(it, "__anext__")
    asyncio.run(it.aclose())  # never started: nothing to stop
