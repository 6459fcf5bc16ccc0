"""Running the binary in --stream-events mode: events in, results out.

All coordination happens in the binary; this module only builds its
command line, reads one JSON event per line and turns the closing
"finished" event into a result or an exception. Cancelling the awaiting
task (or Ctrl+C) stops the binary's whole process group at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._binary import find_binary
from ._errors import MassGenError, error_from

Event = dict[str, Any]
"""One event of a run, as the README's --stream-events table describes it."""

STREAM_VERSION = 1
# The one event schema of the logs, massgen serve's /v1/runs/{id}/events and
# the Go API (docs/events.md): stream(..., event_schema=2) yields it.
EVENT_SCHEMA = 2
# Final answers can be long: one line holds a whole answer.
_LINE_LIMIT = 64 * 1024 * 1024
# After SIGTERM the binary cancels every request within 100 ms and closes its
# logs; past this it is killed.
_TERM_GRACE = 5.0


def _history_json(history: Sequence[Mapping[str, Any]]) -> str:
    msgs = []
    for i, m in enumerate(history):
        role, content = m.get("role"), m.get("content")
        if role not in ("user", "assistant"):
            raise ValueError(f"history[{i}]: role {role!r}, want 'user' or 'assistant'")
        if not isinstance(content, str):
            raise ValueError(f"history[{i}]: content must be a string")
        msgs.append({"role": role, "content": content})
    return json.dumps(msgs)


def command(
    query: str,
    *,
    models: Sequence[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    history_file: str | None = None,
    timeout: float | None = None,
    model: str | None = None,
    backend: str | None = None,
    base_url: str | None = None,
    system_message: str | None = None,
    enable_logging: bool = True,
    log_dir: str | os.PathLike[str] | None = None,
    output_file: str | os.PathLike[str] | None = None,
    debug: bool = False,
    binary: str | None = None,
    event_schema: int = 1,
) -> list[str]:
    """The binary's command line for a run (exposed for tests and debugging)."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must be a non-empty string")
    if isinstance(models, str):
        models = [models]
    if event_schema not in (STREAM_VERSION, EVENT_SCHEMA):
        raise ValueError(f"event_schema must be {STREAM_VERSION} or {EVENT_SCHEMA}")
    args = [binary or find_binary(), "--stream-events"]
    if event_schema != STREAM_VERSION:
        args += ["--event-schema", str(event_schema)]
    if config is not None:
        args += ["--config", os.fspath(config)]
    if models:
        if any("," in m for m in models):
            raise ValueError("a model name cannot contain a comma")
        args += ["--models", ",".join(models)]
    for flag, value in (("--model", model), ("--backend", backend), ("--base-url", base_url),
                        ("--system-message", system_message)):
        if value is not None:
            args += [flag, value]
    if timeout is not None:
        if timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        args += ["--orchestrator-timeout", repr(float(timeout))]
    if not enable_logging:
        args.append("--no-logs")
    if log_dir is not None:
        args += ["--log-dir", os.fspath(log_dir)]
    if output_file is not None:
        args += ["--output-file", os.fspath(output_file)]
    if debug:
        args.append("--debug")
    if history_file is not None:
        args += ["--history-file", history_file]
    return [*args, "--", query]


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Stop the binary and everything it started (MCP servers, tools)."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), _TERM_GRACE)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        pass
    # Kill whatever is left of the group, the binary included if it hung.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(asyncio.CancelledError):
            await proc.wait()


async def events(
    query: str,
    *,
    models: Sequence[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    timeout: float | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    **kw: Any,
) -> AsyncIterator[Event]:
    """Run the binary and yield its events, the closing "finished" one
    included; then raise MassGenError when the run did not complete."""
    tmp = None
    try:
        history_file = None
        if history:
            fd, tmp = tempfile.mkstemp(prefix="massgen-history-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(_history_json(history))
            history_file = tmp
        argv = command(query, models=models, config=config, timeout=timeout, history_file=history_file, **kw)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=os.fspath(cwd) if cwd is not None else None,
            env=dict(env) if env is not None else None,
            start_new_session=True,  # its own process group: stopped as one
            limit=_LINE_LIMIT,
        )
        assert proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.ensure_future(proc.stderr.read())
        finished: Event | None = None
        read_all = False
        try:
            async for raw in proc.stdout:
                if not raw.strip():
                    continue
                ev: Event = json.loads(raw)
                want = kw.get("event_schema", STREAM_VERSION)
                if ev.get("v") != want:
                    raise MassGenError(f"massgen binary speaks event stream v{ev.get('v')}, this library asked for v{want}")
                if ev.get("type") == "finished":
                    finished = ev
                yield ev
            await proc.wait()
            read_all = True
        finally:
            await _stop(proc)
            if not read_all:  # cancelled or closed early: nobody wants stderr
                stderr_task.cancel()
        try:
            # Bounded: a child the binary started may still hold the pipe.
            stderr = (await asyncio.wait_for(stderr_task, 5)).decode(errors="replace")
        except asyncio.TimeoutError:
            stderr = ""
        if finished is None or finished.get("status") != "completed":
            raise error_from(finished, proc.returncode or 0, stderr)
    finally:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def result_from(finished: Event, answers: list[dict[str, Any]], config: Any = None) -> dict[str, Any]:
    """The dict massgen.run returns, from the closing event."""
    total = dict(finished.get("total_usage") or {})
    total["total_tokens"] = int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))
    return {
        "final_answer": finished.get("final_answer", ""),
        "winner": finished.get("winner"),
        "selected_agent": finished.get("winner"),  # upstream's name for it
        "votes": finished.get("votes") or {},
        "how": finished.get("how"),
        "usage": total,
        "usage_by_agent": finished.get("usage") or {},
        "cost": finished.get("cost_usd", 0.0),
        "log_dir": finished.get("log_dir"),
        "final_answer_path": finished.get("answer_file"),
        "answers": answers,
        "status": finished.get("status"),
        "duration": (finished.get("duration_ms") or 0) / 1000.0,
        "fallback": finished.get("fallback"),
        "config_used": os.fspath(config) if config is not None else None,
    }
