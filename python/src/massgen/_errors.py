"""Exceptions a run raises: each carries the agent, provider, model and HTTP
status that the binary's error reported, and the binary's exit code."""

from __future__ import annotations

import re
from typing import Any


class MassGenError(Exception):
    """A run that did not produce a final answer.

    Attributes: ``agent``, ``provider``, ``model``, ``status`` (HTTP status,
    0 when none), ``kind`` (config, failed, timeout, interrupted, …),
    ``failure`` (what failed, as data: auth, quota, rate_limit, stall,
    timeout, circuit_open, bad_request, provider, tool, protocol, cancelled,
    other; "" when the run did not reach an agent), ``retryable`` (whether
    trying again later may succeed), ``retry_after`` (seconds, when known),
    ``exit_code`` (the binary's: 1 config, 2 execution, 3 timeout, 4
    interrupted), ``log_dir`` and ``event`` (the closing event, if any).
    """

    exit_code_default = 2

    def __init__(
        self,
        message: str,
        *,
        agent: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        status: int = 0,
        kind: str = "",
        failure: str = "",
        retryable: bool = False,
        retry_after: float = 0.0,
        exit_code: int | None = None,
        log_dir: str | None = None,
        event: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.agent = agent
        self.provider = provider
        self.model = model
        self.status = status
        self.kind = kind
        self.failure = failure
        self.retryable = retryable
        self.retry_after = retry_after
        self.exit_code = self.exit_code_default if exit_code is None else exit_code
        self.log_dir = log_dir
        self.event = event

    def __str__(self) -> str:
        who = ", ".join(
            f"{k}={v}" for k, v in (("agent", self.agent), ("provider", self.provider), ("status", self.status)) if v
        )
        return f"{self.message} ({who})" if who else self.message


class ConfigError(MassGenError, ValueError):
    """The team could not be built: bad config, unknown model, missing key (exit 1)."""

    exit_code_default = 1


class ExecutionError(MassGenError):
    """The run ran and failed: every agent failed, provider errors (exit 2)."""


class RunTimeoutError(MassGenError, TimeoutError):
    """The run deadline passed without any answer (exit 3)."""

    exit_code_default = 3


class InterruptedRunError(MassGenError):
    """The binary was interrupted from outside (exit 4)."""

    exit_code_default = 4


_BY_EXIT = {1: ConfigError, 2: ExecutionError, 3: RunTimeoutError, 4: InterruptedRunError}

# The binary's messages name its flags; a Python caller set arguments. Each
# flag massgen.run sets for an argument is told as that argument.
_ARGUMENTS = {
    "--config": "config=",
    "--models": "models=",
    "--model": "model=",
    "--backend": "backend=",
    "--base-url": "base_url=",
    "--system-message": "system_message=",
    "--orchestrator-timeout": "timeout=",
    "--output-file": "output_file=",
    "--log-dir": "log_dir=",
    "--no-logs": "enable_logging=False",
    "--history-file": "conversation_history=",
    "--session-id": "session_id=",
    "--continue": "session_id=",
    "--debug": "debug=True",
    "--cwd-context": "context_paths=",
    "--no-parse-at-references": "parse_at_references=False",
}
_FLAG = re.compile(r"--[a-z][a-z-]*")


def python_terms(message: str) -> str:
    """message with the binary's flags told as massgen.run's arguments, and
    a config read from standard input as config_dict."""
    message = message.replace("<stdin>", "config_dict")
    return _FLAG.sub(lambda m: _ARGUMENTS.get(m.group(0), m.group(0)), message)


def error_from(finished: dict[str, Any] | None, returncode: int, stderr: str) -> MassGenError:
    """The exception for a run's closing event (None: the binary died first)."""
    if finished is None:
        tail = stderr.strip()[-2000:] or "(no output)"
        cls = _BY_EXIT.get(returncode, MassGenError)
        if returncode == 1 and tail.startswith("massgen: "):
            # Refused before the run started (the arguments): the binary's
            # message is the whole story.
            return cls(python_terms(tail.removeprefix("massgen: ")), exit_code=returncode)
        return cls(f"massgen exited with code {returncode} before the end of its event stream: {python_terms(tail)}", exit_code=returncode)
    err = finished.get("error") or {}
    if finished.get("v") == 2:
        # The one schema: the error is text and each agent's failure is
        # data; the first agent's stands for the run's, as in version 1.
        failures = finished.get("failures") or [{}]
        f = failures[0]
        err = {"message": finished.get("error"), "agent": f.get("agent"), "provider": f.get("provider"),
               "model": f.get("model"), "status": f.get("status"), "failure": f.get("kind"),
               "retryable": f.get("retryable"), "retry_after_s": f.get("retry_after_s"),
               "kind": "failed" if finished.get("status") == "failed" else finished.get("status")}
    code = finished.get("exit_code", returncode)
    cls = _BY_EXIT.get(code, MassGenError)
    return cls(
        python_terms(err.get("message") or f"run ended with status {finished.get('status')}"),
        agent=err.get("agent"),
        provider=err.get("provider"),
        model=err.get("model"),
        status=err.get("status") or 0,
        kind=err.get("kind") or str(finished.get("status") or ""),
        failure=err.get("failure") or "",
        retryable=bool(err.get("retryable")),
        retry_after=float(err.get("retry_after_s") or 0.0),
        exit_code=code,
        log_dir=finished.get("log_dir"),
        event=finished,
    )
