"""massgen.run(verbose=True): a line on stdout per step of the run, as the
command line's plain display prints them on stderr (upstream's verbose
prints its simple display to stdout)."""

from __future__ import annotations

import sys
from typing import Any, TextIO


def _clip(s: Any, n: int = 80) -> str:
    s = " ".join(str(s or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def describe(ev: dict[str, Any]) -> str | None:
    """The progress line for an event, None for those not worth a line
    (deltas, tool progress)."""
    t, agent = ev.get("type"), ev.get("agent", "")
    if t == "warning":
        where = ev.get("where")
        return (f"{where}: " if where else "") + f"warning: {ev.get('text', '')}"
    if t == "run_started":
        team = ", ".join(f"{a.get('id')} [{a.get('backend')}/{a.get('model')}]" for a in ev.get("agents") or [])
        return f"massgen: run started: {team}"
    if t == "agent_started":
        shown = ev.get("shown") or []
        return f"  {agent} working" + (f" (sees {', '.join(shown)})" if shown else "")
    if t == "answer":
        return f"  {agent} answered {ev.get('label')}: {_clip(ev.get('text'))}"
    if t == "vote":
        return f"  {agent} voted for {ev.get('target')} ({ev.get('target_answer')}): {_clip(ev.get('reason'))}"
    if t == "rejected":
        return f"  {agent}'s response was rejected: {_clip(ev.get('reason'))}"
    if t == "restart":
        return f"  {agent} restarts: {_clip(ev.get('reason'))}"
    if t == "agent_error":
        err = ev.get("error") or {}
        return f"  {agent} turn failed: {_clip(err.get('message') if isinstance(err, dict) else err, 160)}"
    if t == "agent_failed":
        err = ev.get("error") or {}
        msg = err.get("message") if isinstance(err, dict) else err
        return f"  {agent} left the run after {ev.get('reason')}: {_clip(msg, 160)}"
    if t == "timeout":
        return f"  timeout: {_clip(ev.get('reason'))}"
    if t == "winner":
        return f"  winner: {ev.get('winner')} with {ev.get('label')} ({ev.get('how')})"
    if t == "final_started":
        return f"  {agent} is writing the final answer"
    if t == "finished":
        s = f"massgen: run {ev.get('status')}"
        if ev.get("winner"):
            s += f": winner {ev.get('winner')}"
        if ev.get("log_dir"):
            s += f"; logs: {ev.get('log_dir')}"
        return s
    return None


def progress(ev: dict[str, Any], out: TextIO | None = None) -> None:
    line = describe(ev)
    if line is not None:
        print(line, file=out or sys.stdout, flush=True)
