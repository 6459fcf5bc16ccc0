"""Running the binary in --stream-events mode: events in, results out.

All coordination happens in the binary; this module only builds its
command line, reads one JSON event per line and turns the closing
"finished" event into a result or an exception. Cancelling the awaiting
task (or Ctrl+C) stops the binary's whole process group at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import difflib
import inspect
import json
import os
import signal
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._binary import find_binary
from ._config import MAX_AGENTS, build, context_path_list
from ._errors import MassGenError, error_from
from ._progress import progress

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


def _history_json(history: Sequence[Mapping[str, Any]], where: str) -> str:
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise TypeError(f"{where}: a list of {{'role': 'user'|'assistant', 'content': str}} dicts, not {type(history).__name__}")
    msgs = []
    for i, m in enumerate(history):
        if not isinstance(m, Mapping):
            raise TypeError(f"{where}[{i}]: a dict with 'role' and 'content', not {type(m).__name__}")
        role, content = m.get("role"), m.get("content")
        if role not in ("user", "assistant"):
            raise ValueError(f"{where}[{i}]: role {role!r}, want 'user' or 'assistant'")
        if not isinstance(content, str):
            raise ValueError(f"{where}[{i}]: content must be a string")
        msgs.append({"role": role, "content": content})
    return json.dumps(msgs)


@dataclasses.dataclass
class Invocation:
    """How the binary is run for one call: its command line, what goes to
    its standard input (a config_dict), the history for --history-file."""

    argv: list[str]
    stdin: bytes | None = None
    history: str | None = None  # JSON of the earlier turns
    config_used: str | None = None  # upstream's result["config_used"]
    verbose: bool = False


def _json_default(o: Any) -> Any:
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError(f"{type(o).__name__} is not JSON or YAML data")


def invocation(
    api: str,
    query: str,
    *,
    config: str | os.PathLike[str] | None = None,
    config_dict: Mapping[str, Any] | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    num_agents: int | None = None,
    use_docker: bool = False,
    enable_filesystem: bool = True,
    enable_logging: bool = True,
    output_file: str | os.PathLike[str] | None = None,
    verbose: bool = False,
    conversation_history: Sequence[Mapping[str, Any]] | None = None,
    parse_at_references: bool = False,
    system_message: str | None = None,
    base_url: str | None = None,
    context_paths: Sequence[Any] | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    timeout: float | None = None,
    backend: str | None = None,
    log_dir: str | os.PathLike[str] | None = None,
    debug: bool = False,
    binary: str | None = None,
    event_schema: int = 1,
    session_id: str | None = None,
) -> Invocation:
    """The binary's command line for a call of api (massgen.run, …) with
    these arguments; every error names the argument it is about."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"{api}(query=…): the question must be a non-empty string")
    if event_schema not in (STREAM_VERSION, EVENT_SCHEMA):
        raise ValueError(f"{api}(event_schema={event_schema!r}): {STREAM_VERSION} or {EVENT_SCHEMA}")
    if history is not None and conversation_history is not None:
        raise ValueError(f"{api}(): conversation_history= and history= are the same argument: give one")
    hist_name = "history" if history is not None else "conversation_history"
    hist = history if history is not None else conversation_history
    if isinstance(models, str):
        models = [models]
    team = [n for n, v in (("config", config), ("config_dict", config_dict), ("model", model), ("models", models)) if v is not None]
    if len(team) > 1:
        raise ValueError(f"{api}(): give the team one way (config=, config_dict=, model= or models=), not {' and '.join(n + '=' for n in team)}")
    with_model = ("backend", backend), ("base_url", base_url), ("system_message", system_message)
    for name, v in with_model:
        if v is not None and model is None:
            raise ValueError(f"{api}({name}=…) goes with model= (a config names each agent's own)")
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{api}({name}=…): a string, not {type(v).__name__}")
    if num_agents is not None and (isinstance(num_agents, bool) or not isinstance(num_agents, int) or not 1 <= num_agents <= MAX_AGENTS):
        raise ValueError(f"{api}(num_agents={num_agents!r}): a whole number from 1 to {MAX_AGENTS}")
    if num_agents is not None and model is None and models is None:
        raise ValueError(f"{api}(num_agents={num_agents!r}) goes with model= (a config or config_dict names its agents)")
    if team and team[0] in ("config", "config_dict") or not team:
        for name, v in (("use_docker", use_docker), ("enable_filesystem", not enable_filesystem)):
            if v:
                raise ValueError(f"{api}({name}=…) shapes the team built from model= or models=; "
                                 "a config sets command_line_execution_mode and cwd per agent")
    if context_paths is not None and (config is not None or not team):
        raise ValueError(f"{api}(context_paths=…) goes with model=, models= or config_dict=; "
                         "a config file lists its own under orchestrator.context_paths")

    args = [binary or find_binary(), "--stream-events"]
    if event_schema != STREAM_VERSION:
        args += ["--event-schema", str(event_schema)]
    stdin: bytes | None = None
    cfg: dict[str, Any] | None = None
    used: str | None = None
    if config_dict is not None:
        if not isinstance(config_dict, Mapping):
            raise TypeError(f"{api}(config_dict=…): a dict, as massgen.build_config() returns, not {type(config_dict).__name__}")
        cfg = json.loads(json.dumps(config_dict, default=_json_default))  # a copy: the caller's dict is not changed
        if context_paths:
            orch = cfg.setdefault("orchestrator", {})
            have = {p.get("path") for p in orch.get("context_paths") or [] if isinstance(p, Mapping)}
            orch["context_paths"] = list(orch.get("context_paths") or []) + [
                p for p in context_path_list(context_paths, f"{api}(context_paths=…)") if p["path"] not in have]
        used = "config_dict"
    elif models is not None:
        if enable_filesystem or use_docker or context_paths:
            cfg = build(models=models, num_agents=num_agents, use_docker=use_docker, context_paths=context_paths,
                        filesystem=enable_filesystem, api=api)
        else:
            for i, m in enumerate(models):
                if not isinstance(m, str) or not m.strip() or "," in m:
                    raise ValueError(f"{api}(models=…)[{i}]: a model name without commas, not {m!r}")
            args += ["--models", ",".join(models)]
        used = f"multi-agent:{','.join(str(m) for m in models)}"
    elif model is not None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"{api}(model=…): a model name, not {model!r}")
        n = num_agents or 1
        if enable_filesystem or use_docker or context_paths or n > 1:
            cfg = build(num_agents=n, model=model, backend=backend, use_docker=use_docker, context_paths=context_paths,
                        filesystem=enable_filesystem, api=api)
            for a in cfg["agents"]:
                if base_url is not None:
                    a["backend"]["base_url"] = base_url
                if system_message is not None:
                    a["system_message"] = system_message
        else:
            for flag, value in (("--model", model), ("--backend", backend), ("--base-url", base_url),
                                ("--system-message", system_message)):
                if value is not None:
                    args += [flag, value]
        used = f"agent:{model}x{n}"
    elif config is not None:
        if not isinstance(config, (str, os.PathLike)):
            raise TypeError(f"{api}(config=…): a file path or '@examples/NAME', not {type(config).__name__}")
        args += ["--config", os.fspath(config)]
        used = os.fspath(config)
    if cfg is not None:
        args += ["--config", "-"]
        stdin = json.dumps(cfg).encode()
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"{api}(timeout={timeout!r}): a positive number of seconds")
        args += ["--orchestrator-timeout", repr(float(timeout))]
    if not enable_logging:
        args.append("--no-logs")
    if log_dir is not None:
        args += ["--log-dir", os.fspath(log_dir)]
    if output_file is not None:
        args += ["--output-file", os.fspath(output_file)]
    if debug:
        args.append("--debug")
    if not parse_at_references:
        args.append("--no-parse-at-references")  # upstream's default: @path is left as text
    if session_id is not None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise ValueError(f"{api}(session_id={session_id!r}): a session id, as a result's 'session_id'")
        args += ["--session-id", session_id]
    hist_json = _history_json(hist, f"{api}({hist_name}=…)") if hist else None
    return Invocation(argv=[*args, "--", query], stdin=stdin, history=hist_json, config_used=used, verbose=bool(verbose))


# The keywords massgen.run and massgen.stream take besides the question:
# upstream's documented ones, massgen's own, and where the binary runs.
KEYWORDS = tuple(inspect.signature(invocation).parameters)[2:] + ("cwd", "env")


def check_keywords(api: str, kw: Mapping[str, Any]) -> None:
    """A TypeError naming an unknown keyword (and the closest known one),
    in the caller's terms: massgen.run(), not an internal function."""
    for name in kw:
        if name not in KEYWORDS:
            close = difflib.get_close_matches(name, KEYWORDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (it takes {', '.join(KEYWORDS)})"
            raise TypeError(f"{api}() got an unexpected keyword argument {name!r}{hint}")


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


def prepare(api: str, query: str, kw: dict[str, Any]) -> tuple[Invocation, dict[str, Any]]:
    """The invocation for a call of api with keywords kw (KEYWORDS), and
    where the binary runs (cwd, env)."""
    check_keywords(api, kw)
    kw = dict(kw)
    where = {"cwd": kw.pop("cwd", None), "env": kw.pop("env", None), "want": kw.get("event_schema", STREAM_VERSION)}
    return invocation(api, query, **kw), where


async def events(query: str, *, api: str = "massgen.stream", **kw: Any) -> AsyncIterator[Event]:
    """Run the binary and yield its events, the closing "finished" one
    included; then raise MassGenError when the run did not complete.
    kw: the keywords of massgen.run (KEYWORDS)."""
    inv, where = prepare(api, query, kw)
    async for ev in run_invocation(inv, **where):
        yield ev


async def run_invocation(inv: Invocation, *, cwd: Any = None, env: Mapping[str, str] | None = None,
                         want: int = STREAM_VERSION) -> AsyncIterator[Event]:
    """events() for a prepared invocation."""
    tmp = None
    try:
        argv = list(inv.argv)
        if inv.history is not None:
            fd, tmp = tempfile.mkstemp(prefix="massgen-history-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(inv.history)
            argv[-2:-2] = ["--history-file", tmp]  # before "--", query
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if inv.stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=os.fspath(cwd) if cwd is not None else None,
            env=dict(env) if env is not None else None,
            start_new_session=True,  # its own process group: stopped as one
            limit=_LINE_LIMIT,
        )
        assert proc.stdout is not None and proc.stderr is not None
        if inv.stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(inv.stdin)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await proc.stdin.drain()
            proc.stdin.close()
        stderr_task = asyncio.ensure_future(proc.stderr.read())
        finished: Event | None = None
        read_all = False
        try:
            async for raw in proc.stdout:
                if not raw.strip():
                    continue
                ev: Event = json.loads(raw)
                if ev.get("v") != want:
                    raise MassGenError(f"massgen binary speaks event stream v{ev.get('v')}, this library asked for v{want}")
                if ev.get("type") == "finished":
                    finished = ev
                if inv.verbose:
                    progress(ev)
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


class Collector:
    """What a run's events say beyond its closing line, for the result:
    the answers (with upstream's keys), the ballots that stand at the end
    and the anonymous labels. It only records what the binary reported:
    a new answer clears the ballots, as every client is told (docs/events.md)."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.ballots: dict[str, dict[str, Any]] = {}  # voter → its standing vote
        self.anon: dict[str, str] = {}  # agent1 → agent id

    def add(self, ev: Event) -> None:
        t = ev.get("type")
        if t == "answer":
            agent = ev.get("agent")
            self.answers.append({"label": ev.get("label"), "agent_id": agent, "agent": agent,
                                 "answer_path": None, "content": ev.get("text", "")})
            if ev.get("anon_label"):
                self.anon[ev["anon_label"]] = agent
            self.ballots.clear()
        elif t == "vote":
            self.ballots[ev.get("agent")] = {"target": ev.get("target"), "reason": ev.get("reason", "")}
        elif t == "agent_failed":
            self.ballots.pop(ev.get("agent"), None)


def _answer_dirs(log_dir: str | None, answers: list[dict[str, Any]]) -> None:
    """Each answer's directory in the log (agent_<id>/<time>/answer.txt),
    upstream's answer_path: an agent's answers in order, its directories in
    time order."""
    if not log_dir:
        return
    seen: dict[str, int] = {}
    for a in answers:
        agent = a.get("agent_id") or ""
        d = os.path.join(log_dir, f"agent_{agent}")
        try:
            dirs = sorted(e for e in os.listdir(d) if os.path.isfile(os.path.join(d, e, "answer.txt")))
        except OSError:
            continue
        i = seen.get(agent, 0)
        seen[agent] = i + 1
        if i < len(dirs):
            a["answer_path"] = os.path.join(d, dirs[i])


def result_from(finished: Event, seen: Collector | list[dict[str, Any]], config_used: Any = None) -> dict[str, Any]:
    """The dict massgen.run returns, from the closing event and what the
    run's events said (upstream's keys, and massgen's own beside them)."""
    if not isinstance(seen, Collector):  # a list of answers, as before
        c = Collector()
        c.answers = [dict(a, agent_id=a.get("agent"), answer_path=None) for a in seen]
        seen = c
    total = dict(finished.get("total_usage") or {})
    total["total_tokens"] = int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))
    total["prompt_tokens"], total["completion_tokens"] = total.get("input_tokens", 0), total.get("output_tokens", 0)
    tally = {k: v for k, v in (finished.get("votes") or {}).items() if v}
    details: dict[str, list[dict[str, str]]] = {}
    for voter, b in seen.ballots.items():
        if tally.get(b["target"]):
            details.setdefault(b["target"], []).append({"voter": voter, "reason": b["reason"]})
    top = max(tally.values(), default=0)
    log_dir = finished.get("log_dir")
    _answer_dirs(log_dir, seen.answers)
    return {
        "final_answer": finished.get("final_answer", ""),
        "winner": finished.get("winner"),
        "selected_agent": finished.get("winner"),  # upstream's name for it
        "votes": finished.get("votes") or {},
        "vote_results": {
            "vote_counts": tally,
            "voter_details": details,
            "winner": finished.get("winner"),
            "is_tie": sum(1 for v in tally.values() if v == top) > 1,
            "total_votes": sum(tally.values()),
            "agents_with_answers": len({a["agent_id"] for a in seen.answers}),
            "agents_voted": sum(len(v) for v in details.values()),
            "agent_mapping": dict(seen.anon),
        },
        "how": finished.get("how"),
        "usage": total,
        "usage_by_agent": finished.get("usage") or {},
        "cost": finished.get("cost_usd", 0.0),
        "log_dir": log_dir,
        "log_directory": log_dir,  # upstream's name for it
        "final_answer_path": finished.get("answer_file"),
        "answers": seen.answers,
        "status": finished.get("status"),
        "duration": (finished.get("duration_ms") or 0) / 1000.0,
        "fallback": finished.get("fallback"),
        "session_id": finished.get("session_id"),
        "config_used": os.fspath(config_used) if config_used is not None else None,
    }
