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
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ._binary import BinaryNotFound, find_binary
from ._errors import (
    ConfigError,
    ExecutionError,
    InterruptedRunError,
    MassGenError,
    RunTimeoutError,
)
from ._config import build as _build_config
from ._run import EVENT_SCHEMA, STREAM_VERSION, Collector, Event, prepare, result_from, run_invocation

__version__ = "0.1.0"

__all__ = [
    "EVENT_SCHEMA",
    "STREAM_VERSION",
    "BinaryNotFound",
    "build_config",
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


def build_config(
    num_agents: int | None = None,
    backend: str | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    use_docker: bool = False,
    context_paths: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """A team's config as a dict, for ``run(config_dict=...)`` (upstream's
    ``massgen.build_config``).

    ``models``: one agent per model, ``"gpt-5"`` or ``"groq/llama-3.3-70b"``
    (backend/model; ``backends`` gives the backends instead); ``model``: the
    same model for ``num_agents`` agents (default 2), with ``backend`` if
    the name does not say it; neither: two agents on gpt-5. Every agent gets
    a workspace of its own per run; ``use_docker`` gives each a command line
    in a Docker container. ``context_paths``: paths the agents may read
    (``{"path": p, "permission": "read"}``) or, for the winner's final
    presentation, write (a bare path, or permission "write"). Agents are
    ``agent_a``, ``agent_b``, … A model name without a backend gets no
    ``type``: the binary infers it, as for ``--model``.
    """
    return _build_config(num_agents=num_agents, backend=backend, model=model, models=models, backends=backends,
                         use_docker=use_docker, context_paths=context_paths)


async def run(query: str, **kw: Any) -> dict[str, Any]:
    """Run a team on query and return its result (upstream's ``massgen.run``).

    The team, one of: ``config`` (a MassGen YAML/JSON file or
    ``"@examples/NAME"``), ``config_dict`` (a config as a dict, e.g. from
    ``build_config``), ``models`` (one agent per model, e.g.
    ``["openai/gpt-5", "groq/llama-3.3-70b"]``) or ``model`` (``num_agents``
    agents on it, default 1; with ``backend``, ``base_url``,
    ``system_message``). ``model``/``models`` teams get a workspace per agent
    unless ``enable_filesystem=False``; ``use_docker=True`` gives them a
    command line in Docker; ``context_paths`` shares paths with them (also
    with a ``config_dict``). Given none, the binary's config discovery
    applies (``.massgen/config.yaml``, ``~/.config/massgen/config.yaml``).

    ``conversation_history`` (or ``history``): earlier turns,
    ``[{"role": "user"|"assistant", "content": "…"}]``, oldest first.
    ``parse_at_references=True`` shares the files the question names as
    ``@path`` (read) or ``@path:w``. ``verbose=True`` prints a line per step
    on stdout. ``enable_logging`` (default True: the log directory is
    written), ``output_file``, ``timeout`` (the run's deadline, seconds),
    ``session_id`` (ask a follow-up in that session, as a result's
    ``session_id``), ``log_dir``, ``debug``, ``cwd``, ``env``, ``binary``.

    Returns a dict with upstream's keys — ``final_answer``, ``config_used``,
    ``session_id``, ``log_directory``, ``final_answer_path``,
    ``selected_agent``, ``vote_results`` (``vote_counts``,
    ``voter_details``, ``winner``, ``is_tie``, ``agent_mapping``, …),
    ``answers`` (``label``, ``agent_id``, ``answer_path``, ``content``),
    ``usage`` — and massgen's: ``winner``, ``votes``, ``how``,
    ``usage_by_agent``, ``cost`` (USD), ``log_dir``, ``status``, ``duration``
    (s), ``fallback``. An unknown keyword is a TypeError naming it; a bad
    value a ValueError or TypeError naming the argument. Raises MassGenError
    (ConfigError, ExecutionError, RunTimeoutError, …) with the agent,
    provider and status when the run does not complete. Cancelling the task
    stops the binary at once.
    """
    return await _run_result("massgen.run", query, kw)


async def _run_result(api: str, query: str, kw: dict[str, Any]) -> dict[str, Any]:
    inv, where = prepare(api, query, kw)
    seen = Collector()
    finished: Event | None = None
    async for ev in run_invocation(inv, **where):
        seen.add(ev)
        if ev.get("type") == "finished":
            finished = ev
    assert finished is not None  # run_invocation raises otherwise
    return result_from(finished, seen, inv.config_used)


def run_sync(query: str, **kw: Any) -> dict[str, Any]:
    """run() for code without an event loop (also works inside one, e.g.
    Jupyter, by running in a worker thread)."""
    coro = _run_result("massgen.run_sync", query, kw)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def stream(query: str, **kw: Any) -> AsyncIterator[Event]:
    """The run's events as they happen, as dicts (docs/events.md):
    run_started, agent_started, answer, vote, restart, tool_call,
    final_delta, …, and last "finished" with the result. Takes run()'s
    arguments. Raises MassGenError after "finished" when the run failed.
    Breaking out of the loop stops the run.

        async for ev in massgen.stream("question", config="@examples/sim_three_agents"):
            if ev["type"] == "final_delta":
                print(ev["text"], end="", flush=True)

    With event_schema=2 the events are in the one schema instead
    (docs/events.md): the records of the logs and of massgen serve's
    /v1/runs/{id}/events ("new_answer", "vote_cast", …), "finished" last.
    Argument errors are raised here, before any iteration.
    """
    inv, where = prepare("massgen.stream", query, kw)
    return run_invocation(inv, **where)


def register_with_litellm() -> None:
    """Make ``litellm.completion(model="massgen/…")`` run a team: see
    massgen.litellm_provider. Needs the litellm package."""
    from .litellm_provider import register

    register()
