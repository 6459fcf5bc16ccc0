"""massgen.build_config: a team's config as a dict, as upstream builds it.

The dict is a MassGen config (the YAML's structure) holding only keys the
binary acts on; massgen.run(config_dict=...) hands it to the binary on
standard input. Backends are not guessed here: an agent whose model has no
"backend/" prefix and no backend= gets no "type", and the binary infers it
from the model name, as it does for --model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

# Upstream's default team is two agents on OpenAI's current flagship; this
# catalogue's is gpt-5 (upstream names gpt-5.4, which the catalogue does
# not price yet).
DEFAULT_MODEL = "gpt-5"
DEFAULT_BACKEND = "openai"
MAX_AGENTS = 10


def _agent_id(i: int) -> str:
    return f"agent_{chr(ord('a') + i)}"  # agent_a, agent_b, … as upstream


def _split(spec: str, where: str) -> tuple[str | None, str]:
    """'backend/model' → (backend, model); a bare model → (None, model)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"{where}: a model name (a non-empty string), not {spec!r}")
    if "/" in spec:
        backend, model = spec.split("/", 1)
        if not backend or not model:
            raise ValueError(f"{where}: {spec!r} is not 'backend/model' or a model name")
        return backend, model
    return None, spec


def context_path_list(paths: Any, where: str) -> list[dict[str, str]]:
    """Upstream's context_paths: each a path (write permission) or
    {"path": ..., "permission": "read"|"write"}."""
    if isinstance(paths, (str, os.PathLike)) or not isinstance(paths, Sequence):
        raise TypeError(f"{where}: a list of paths or {{'path': ..., 'permission': 'read'|'write'}} dicts, not {type(paths).__name__}")
    out = []
    for i, entry in enumerate(paths):
        if isinstance(entry, (str, os.PathLike)):
            out.append({"path": os.fspath(entry), "permission": "write"})
            continue
        if not isinstance(entry, Mapping) or "path" not in entry:
            raise TypeError(f"{where}[{i}]: a path or a dict with 'path', not {entry!r}")
        perm = entry.get("permission", "write")
        if perm not in ("read", "write"):
            raise ValueError(f"{where}[{i}]: permission {perm!r}, want 'read' or 'write'")
        out.append({"path": os.fspath(entry["path"]), "permission": perm})
    return out


def build(
    num_agents: int | None = None,
    backend: str | None = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    use_docker: bool = False,
    context_paths: Sequence[Any] | None = None,
    *,
    filesystem: bool = True,
    api: str = "massgen.build_config",
) -> dict[str, Any]:
    """build_config's work; filesystem=False leaves the workspaces out
    (massgen.run(enable_filesystem=False))."""
    if isinstance(models, str):
        models = [models]
    if num_agents is not None:
        if isinstance(num_agents, bool) or not isinstance(num_agents, int) or not 1 <= num_agents <= MAX_AGENTS:
            raise ValueError(f"{api}(num_agents={num_agents!r}): a whole number from 1 to {MAX_AGENTS}")
    if backends is not None and (isinstance(backends, str) or not isinstance(backends, Sequence)):
        raise TypeError(f"{api}(backends=…): a list of backend types, one per model, not {type(backends).__name__}")
    specs: list[tuple[str | None, str]] = []
    if models is not None:
        if not isinstance(models, Sequence) or len(models) == 0:
            raise ValueError(f"{api}(models=…): a non-empty list of model names")
        if len(models) > MAX_AGENTS:
            raise ValueError(f"{api}(models=…): at most {MAX_AGENTS} agents, got {len(models)}")
        if num_agents is not None and num_agents != len(models):
            raise ValueError(f"{api}(num_agents={num_agents}): models= names {len(models)} agents already")
        for i, spec in enumerate(models):
            b, m = _split(spec, f"{api}(models=…)[{i}]")
            if backends is not None and i < len(backends):
                b = backends[i]
            specs.append((b, m))
    elif model is not None:
        b, m = _split(model, f"{api}(model=…)")
        specs = [(backend or b, m)] * (num_agents or 2)
    else:
        specs = [(backend or DEFAULT_BACKEND, DEFAULT_MODEL)] * (num_agents or 2)
    agents = []
    for i, (b, m) in enumerate(specs):
        be: dict[str, Any] = {}
        if b:
            be["type"] = b
        be["model"] = m
        if filesystem or use_docker:
            # The value only switches the workspace on: each agent gets a
            # fresh one per run under .massgen/workspaces/ (docs/safety.md).
            be["cwd"] = "workspace"
        if use_docker:
            be["enable_mcp_command_line"] = True
            be["command_line_execution_mode"] = "docker"
        agents.append({"id": _agent_id(i), "backend": be})
    cfg: dict[str, Any] = {"agents": agents}
    if context_paths:
        cfg["orchestrator"] = {"context_paths": context_path_list(context_paths, f"{api}(context_paths=…)")}
    return cfg
