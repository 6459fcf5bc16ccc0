"""The LiteLLM provider with the real litellm package."""

from __future__ import annotations

from pathlib import Path

import litellm
import pytest

import massgen

massgen.register_with_litellm()

MSGS = [{"role": "user", "content": "What is 2+2?"}]


def _check_usage(u: object) -> None:
    assert u is not None
    assert u.prompt_tokens > 0 and u.completion_tokens > 0  # type: ignore[attr-defined]
    assert u.total_tokens == u.prompt_tokens + u.completion_tokens  # type: ignore[attr-defined]


def test_completion_build_with_models(tmp_path: Path) -> None:
    r = litellm.completion(model="massgen/build", messages=MSGS, optional_params={"models": ["sim/alpha", "sim/beta"]},
                           cwd=str(tmp_path))
    text = r.choices[0].message.content
    assert "What is 2+2?" in text and "Final answer" in text
    _check_usage(r.usage)
    meta = r._hidden_params["massgen_metadata"]
    assert meta["selected_agent"] in ("sim_alpha", "sim_beta") and Path(meta["log_directory"]).is_dir()


def test_completion_with_an_example_config_and_history(tmp_path: Path) -> None:
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "I am Zorblax."},
            {"role": "assistant", "content": "Hi Zorblax."}, {"role": "user", "content": "Who am I?"}]
    r = litellm.completion(model="massgen/sim_three_agents", messages=msgs, cwd=str(tmp_path))
    assert "Who am I?" in r.choices[0].message.content
    logs = r._hidden_params["massgen_metadata"]["log_directory"]
    assert all("Zorblax" in c.read_text() for c in Path(logs).glob("agent_*/*/context.txt"))


def test_completion_with_a_config_path(tmp_path: Path) -> None:
    cfg = tmp_path / "team.yaml"
    cfg.write_text("agents:\n  - id: solo\n    backend: {type: sim, model: sim-solo}\n")
    r = litellm.completion(model=f"massgen/{cfg}", messages=MSGS, enable_logging=False, cwd=str(tmp_path))
    assert "[sim model sim-solo]" in r.choices[0].message.content


async def test_acompletion(tmp_path: Path) -> None:
    r = await litellm.acompletion(model="massgen/build", messages=MSGS, optional_params={"models": ["sim/a"]},
                                  cwd=str(tmp_path))
    assert "What is 2+2?" in r.choices[0].message.content
    _check_usage(r.usage)


def test_streaming_sync(tmp_path: Path) -> None:
    chunks = list(litellm.completion(model="massgen/sim_three_agents", messages=MSGS, stream=True,
                                     stream_options={"include_usage": True}, cwd=str(tmp_path)))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Final answer — the researcher's draft") and "What is 2+2?" in text
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1  # really streamed
    _check_usage(chunks[-1].usage)


async def test_streaming_async(tmp_path: Path) -> None:
    resp = await litellm.acompletion(model="massgen/build", messages=MSGS, stream=True, stream_options={"include_usage": True},
                                     optional_params={"models": ["sim/a", "sim/b"]}, cwd=str(tmp_path))
    chunks = [c async for c in resp]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "Final answer" in text and "What is 2+2?" in text
    _check_usage(chunks[-1].usage)


def test_streaming_single_agent_sends_the_answer(tmp_path: Path) -> None:
    # One agent: no presentation deltas; the answer still arrives.
    chunks = list(litellm.completion(model="massgen/model:sim-solo", messages=MSGS, stream=True,
                                     backend="sim", cwd=str(tmp_path)))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("[sim model sim-solo] Answer 1 to: What is 2+2?")


def test_errors_carry_agent_provider_status(tmp_path: Path, failing_config: Path) -> None:
    with pytest.raises(Exception) as ei:
        litellm.completion(model=f"massgen/{failing_config}", messages=MSGS, cwd=str(tmp_path))
    e = ei.value
    # LiteLLM maps the status to its own exception type and keeps ours as the context.
    assert isinstance(e, litellm.AuthenticationError) and e.status_code == 401
    assert "401" in str(e) and "agent=a" in str(e) and "provider=sim" in str(e)
    cause: BaseException | None = e
    while cause is not None and not isinstance(cause, massgen.MassGenError):
        cause = cause.__cause__ or cause.__context__
    assert cause is not None and (cause.agent, cause.provider, cause.status) == ("a", "sim", 401)


def test_build_without_models_is_refused() -> None:
    with pytest.raises(Exception, match="optional_params"):
        litellm.completion(model="massgen/build", messages=MSGS)
