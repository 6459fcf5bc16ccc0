# -*- coding: utf-8 -*-
"""massgen's custom-tool runner.

massgen (a Go program) starts this script once per team and speaks JSON
lines with it: a request per line on stdin, a reply per line on stdout.

  {"id": 1, "op": "load", "tools": [{"key", "file", "function",
      "description", "preset_args"}]}
      -> {"id": 1, "tools": [{"key", "description", "parameters", "error"}]}
  {"id": 2, "op": "call", "key": "...", "args": {...}}
      -> {"id": 2, "text": "...", "error": false}
  {"op": "cancel", "target": 2}            (no reply: massgen stopped waiting)

Calls run concurrently: coroutines on the event loop, plain functions in
worker threads. Whatever a tool prints goes to stderr, never into the
protocol. The runner ends when stdin closes (massgen ended or died).
"""

import asyncio
import collections.abc
import importlib.util
import inspect
import json
import os
import re
import sys
import sysconfig
import threading
import traceback
import types
import typing

MAX_TEXT = 1 << 20  # a result's text beyond this is cut, with a note

_STDLIB = sysconfig.get_paths()["stdlib"]
_modules = {}  # absolute file path -> module
_tools = {}  # key -> (function, preset_args)


# ---- loading ---------------------------------------------------------------


def _load_module(path):
    if path in _modules:
        return _modules[path]
    # The file's directory comes first, as when it is run as a script, so
    # its sibling modules import.
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "massgen_custom_tool_%d" % len(_modules)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s as a Python module" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _modules[path] = module
    return module


def _load_one(entry):
    path, fname = entry["file"], entry["function"]
    try:
        module = _load_module(path)
    except BaseException as err:  # an import error in the file or a dependency
        return {"key": entry["key"], "error": "cannot load %s: %s" % (path, _describe(err))}
    fn = getattr(module, fname, None)
    if fn is None or not callable(fn):
        have = sorted(n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_") and v.__module__ == module.__name__)
        return {
            "key": entry["key"],
            "error": "%s defines no function %r (its functions: %s)" % (path, fname, ", ".join(have) or "none"),
        }
    preset = entry.get("preset_args") or {}
    desc, params = _schema(fn, preset)
    _tools[entry["key"]] = (fn, preset)
    return {"key": entry["key"], "description": entry.get("description") or desc, "parameters": params}


# ---- schemas ---------------------------------------------------------------

_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Returns?|Yields?|Raises|Examples?|Notes?|Attributes|Todo)\s*:\s*$"
)
_ARG_SECTIONS = ("args", "arguments", "parameters", "params", "keyword args")
_ARG_LINE = re.compile(r"^(\s*)\**(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc):
    """Description (the text before the first section) and the Args
    section's text per parameter, from a Google-style docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    desc, params = [], {}
    section, current, indent = None, None, None
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section, current, indent = m.group(1).lower(), None, None
            continue
        if section is None:
            desc.append(line)
        elif section in _ARG_SECTIONS:
            a = _ARG_LINE.match(line)
            if a and (indent is None or len(a.group(1)) <= indent):
                indent, current = len(a.group(1)), a.group(2)
                params[current] = a.group(4).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(desc).strip(), params


_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_NAMED = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array", "dict": "object"}


def _type_schema(tp):
    """The JSON Schema of a type hint; {} (anything) for what it cannot say."""
    if tp is inspect.Parameter.empty or tp is typing.Any:
        return {}
    if isinstance(tp, str):  # a hint that did not resolve
        name = tp.strip().split("[")[0].lower()
        return {"type": _NAMED[name]} if name in _NAMED else {}
    if tp in _PRIMITIVES:
        return {"type": _PRIMITIVES[tp]}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    union_type = getattr(types, "UnionType", None)
    if origin is typing.Union or (union_type is not None and isinstance(tp, union_type)):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _type_schema(rest[0])  # Optional[X]: an X that may be left out
        return {"anyOf": [_type_schema(a) for a in rest]}
    if origin is typing.Literal:
        out = {"enum": list(args)}
        kinds = {_PRIMITIVES.get(type(a)) for a in args}
        if len(kinds) == 1 and None not in kinds:
            out["type"] = kinds.pop()
        return out
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, collections.abc.Sequence):
        out = {"type": "array"}
        if args and origin is not tuple:
            out["items"] = _type_schema(args[0])
        return out
    if tp is dict or origin in (dict, collections.abc.Mapping):
        out = {"type": "object"}
        if len(args) == 2 and _type_schema(args[1]):
            out["additionalProperties"] = _type_schema(args[1])
        return out
    return {}


def _schema(fn, preset):
    desc, docs = _parse_docstring(fn.__doc__)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a hint naming something not importable: use the raw text
        hints = dict(getattr(fn, "__annotations__", {}))
    props, required = {}, []
    for name, p in inspect.signature(fn).parameters.items():
        if name in ("self", "cls") or name in preset:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        s = dict(_type_schema(hints.get(name, p.annotation)))
        if docs.get(name):
            s["description"] = docs[name]
        if p.default is p.empty:
            required.append(name)
        else:
            try:
                json.dumps(p.default)
                s["default"] = p.default
            except (TypeError, ValueError):
                pass
        props[name] = s
    params = {"type": "object", "properties": props}
    if required:
        params["required"] = required
    return desc, params


# ---- calling ---------------------------------------------------------------


def _last(gen):
    result = None
    for result in gen:
        pass
    return result


async def _run(fn, kwargs):
    if inspect.isasyncgenfunction(fn):
        result = None
        async for result in fn(**kwargs):  # a streaming tool: its last result is the answer
            pass
        return result
    if inspect.iscoroutinefunction(fn):
        result = await fn(**kwargs)
    else:
        result = await asyncio.to_thread(fn, **kwargs)
    if inspect.isgenerator(result):
        result = await asyncio.to_thread(_last, result)
    elif inspect.isasyncgen(result):
        last = None
        async for last in result:
            pass
        result = last
    elif inspect.isawaitable(result):
        result = await result
    return result


def _render(result):
    """The text of a tool's result for the model."""
    if result is None:
        return ""
    blocks = getattr(result, "output_blocks", None)
    if blocks is None:
        if isinstance(result, str):
            return result
        try:
            return json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            return str(result)
    parts = []
    for b in blocks:
        kind, data = getattr(b, "block_type", "text"), getattr(b, "data", b)
        if kind == "text":
            parts.append(str(data))
        elif isinstance(data, str) and os.path.exists(data):
            parts.append("[%s: %s]" % (kind, data))
        else:
            parts.append("[%s: %d characters of data, not shown]" % (kind, len(str(data))))
    return "\n".join(parts)


def _describe(err):
    """An exception as the model should read it: its type, message, and
    where in the tool's own code it was raised."""
    text = "%s: %s" % (type(err).__name__, err)
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename != __file__ and not f.filename.startswith(_STDLIB)]
    if frames:
        f = frames[-1]
        text += " (at %s line %d, in %s)" % (os.path.basename(f.filename), f.lineno, f.name)
    return text


async def _call(msg, reply):
    entry = _tools.get(msg.get("key"))
    if entry is None:
        reply({"id": msg["id"], "error": True, "text": "no tool %r is loaded" % msg.get("key")})
        return
    fn, preset = entry
    kwargs = dict(preset)
    kwargs.update(msg.get("args") or {})
    try:
        result = await _run(fn, kwargs)
        text = _render(result)
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT] + "\n[result truncated: %d more characters]" % (len(text) - MAX_TEXT)
        reply({"id": msg["id"], "text": text, "error": False})
    except asyncio.CancelledError:
        return  # massgen stopped waiting: nobody reads a reply
    except BaseException as err:
        reply({"id": msg["id"], "error": True, "text": _describe(err)})


# ---- the loop ----------------------------------------------------------------


async def _serve(out):
    loop = asyncio.get_running_loop()
    lines = asyncio.Queue()
    write_lock = threading.Lock()

    def reply(obj):
        data = json.dumps(obj, ensure_ascii=False, default=str) + "\n"
        with write_lock:
            out.write(data)
            out.flush()

    def read():
        for raw in sys.stdin.buffer:
            loop.call_soon_threadsafe(lines.put_nowait, raw)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read, daemon=True).start()
    running = {}
    while True:
        raw = await lines.get()
        if raw is None:
            return
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        op = msg.get("op")
        if op == "load":
            reply({"id": msg["id"], "tools": [_load_one(e) for e in msg.get("tools", [])]})
        elif op == "call":
            task = asyncio.ensure_future(_call(msg, reply))
            running[msg["id"]] = task
            task.add_done_callback(lambda _t, i=msg["id"]: running.pop(i, None))
        elif op == "cancel":
            task = running.get(msg.get("target"))
            if task is not None:
                task.cancel()


def main():
    # The protocol keeps the real stdout; everything else written there —
    # print() in a tool, a subprocess it starts — goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # The stand-in massgen package is a fallback: a real MassGen, if
    # installed, wins.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here] + [here]
    asyncio.run(_serve(out))
    os._exit(0)  # worker threads of unfinished sync tools must not hold the exit


if __name__ == "__main__":
    main()
