"""massgen: several LLM agents answer in parallel, refine each other's
answers and vote; the answer the team converges on is returned.

    import asyncio, massgen
    result = asyncio.run(massgen.run("What is the capital of France?",
                                     config="@examples/sim_three_agents"))
    print(result["final_answer"])

The work is done by the massgen binary this package carries (run in its
``--stream-events`` mode); this package starts it, reads its events and
stops it when the caller cancels.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._binary import BinaryNotFound, find_binary
from ._errors import (
    ConfigError,
    ExecutionError,
    InterruptedRunError,
    MassGenError,
    RunTimeoutError,
)
from ._run import EVENT_SCHEMA, STREAM_VERSION, Event, events, result_from

__version__ = "0.1.0"

__all__ = [
    "EVENT_SCHEMA",
    "STREAM_VERSION",
    "BinaryNotFound",
    "ConfigError",
    "Event",
    "ExecutionError",
    "InterruptedRunError",
    "MassGenError",
    "RunTimeoutError",
    "find_binary",
    "register_with_litellm",
    "run",
    "run_sync",
    "stream",
]


async def run(
    query: str,
    *,
    models: Sequence[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    timeout: float | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """Run a team on query and return its result.

    The team: ``config`` (a MassGen YAML/JSON file or ``"@examples/NAME"``),
    or ``models`` (one agent per model, e.g. ``["openai/gpt-5",
    "groq/llama-3.3-70b"]``), or ``model=`` (one agent); none of them uses
    the config discovery of the command line. ``history`` holds earlier
    turns, ``[{"role": "user"|"assistant", "content": "…"}]``, oldest first.
    ``timeout`` is the whole run's deadline in seconds.

    Other keywords: ``backend``, ``base_url``, ``system_message`` (with
    ``model``), ``enable_logging`` (False: no log directory), ``log_dir``,
    ``output_file``, ``debug``, ``cwd``, ``env``, ``binary``.

    Returns a dict with ``final_answer``, ``winner`` (also
    ``selected_agent``), ``votes``, ``usage`` (input/output/total tokens),
    ``usage_by_agent``, ``cost`` (USD), ``log_dir``, ``final_answer_path``,
    ``answers``, ``status``, ``duration`` (s), ``fallback`` and
    ``config_used``. Raises MassGenError (ConfigError, ExecutionError,
    RunTimeoutError, …) with the agent, provider and status when the run
    does not complete. Cancelling the task stops the binary at once.
    """
    answers: list[dict[str, Any]] = []
    finished: Event | None = None
    async for ev in events(query, models=models, config=config, history=history, timeout=timeout, **kw):
        t = ev.get("type")
        if t == "answer":
            answers.append({"agent": ev.get("agent"), "label": ev.get("label"), "content": ev.get("text", "")})
        elif t == "finished":
            finished = ev
    assert finished is not None  # events raises otherwise
    return result_from(finished, answers, config)


def run_sync(query: str, **kw: Any) -> dict[str, Any]:
    """run() for code without an event loop (also works inside one, e.g.
    Jupyter, by running in a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run(query, **kw))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run(query, **kw)).result()


def stream(
    query: str,
    *,
    models: Sequence[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    timeout: float | None = None,
    **kw: Any,
) -> AsyncIterator[Event]:
    """The run's events as they happen, as dicts (see the README's
    --stream-events table): run_started, agent_started, answer, vote,
    restart, tool_call, final_delta, …, and last "finished" with the
    result. Raises MassGenError after "finished" when the run failed.
    Breaking out of the loop stops the run.

        async for ev in massgen.stream("question", config="@examples/sim_three_agents"):
            if ev["type"] == "final_delta":
                print(ev["text"], end="", flush=True)

    With event_schema=2 the events are in the one schema instead
    (docs/events.md): the records of the logs and of massgen serve's
    /v1/runs/{id}/events ("new_answer", "vote_cast", …), "finished" last.
    """
    return events(query, models=models, config=config, history=history, timeout=timeout, **kw)


def register_with_litellm() -> None:
    """Make ``litellm.completion(model="massgen/…")`` run a team: see
    massgen.litellm_provider. Needs the litellm package."""
    from .litellm_provider import register

    register()
