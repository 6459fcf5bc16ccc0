"""massgen as a LiteLLM custom provider.

    import litellm, massgen
    massgen.register_with_litellm()
    litellm.completion(model="massgen/build", messages=[...],
                       optional_params={"models": ["openai/gpt-5", "groq/llama-3.3-70b"]})
    litellm.completion(model="massgen/sim_three_agents", messages=[...])  # an example config
    litellm.completion(model="massgen/./team.yaml", messages=[...])       # a config file
    litellm.completion(model="massgen/model:gpt-5-mini", messages=[...])  # one agent

The last user message is the question; earlier user and assistant messages
are the history; system messages are put before the question. completion,
acompletion and streaming (sync and async) work; usage is the whole team's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import litellm
from litellm.llms.custom_llm import CustomLLM, CustomLLMError
from litellm.types.utils import GenericStreamingChunk, ModelResponse, Usage

from . import _run
from ._errors import MassGenError

PROVIDER = "massgen"
# How errors name the call: the provider's optional_params are run()'s.
_API = "massgen LiteLLM provider"

# optional_params keys passed on to massgen.run; the rest are ignored
# (sampling parameters mean nothing to a team).
_RUN_KEYS = ("models", "config", "timeout", "enable_logging", "log_dir", "system_message", "backend", "base_url", "cwd", "env", "binary")


class MassGenLiteLLMError(CustomLLMError):
    """A failed run as LiteLLM sees it (status_code is the provider's HTTP
    status, else 500), keeping the MassGenError as ``massgen_error`` with its
    agent, provider and status."""

    def __init__(self, err: MassGenError) -> None:
        super().__init__(  # type: ignore[no-untyped-call]
            status_code=err.status or (400 if err.exit_code == 1 else 500), message=str(err))
        self.massgen_error = err
        self.agent, self.provider, self.status = err.agent, err.provider, err.status


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") in ("text", "input_text"))
    return "" if content is None else str(content)


def _request(model: str, messages: list[Any], optional_params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The question and massgen.run keywords for a LiteLLM call."""
    params = dict(optional_params or {})
    params.update(params.pop("optional_params", None) or {})  # optional_params={...} given as a keyword
    kw = {k: params[k] for k in _RUN_KEYS if params.get(k) is not None}
    name = model.split("/", 1)[1] if model.startswith(PROVIDER + "/") else model
    if name.startswith("model:"):
        kw["model"] = name[len("model:"):]
    if "model" in kw or "models" in kw:
        # A chat completion touches no files: the team built from model
        # names gets no workspaces (massgen.run's default gives them).
        kw["enable_filesystem"] = False
    elif name != "build":
        looks_like_path = name.endswith((".yaml", ".yml", ".json")) or os.sep in name or name.startswith("@")
        kw["config"] = name if looks_like_path else f"@examples/{name}"
    elif not kw.get("models") and not kw.get("config"):
        raise CustomLLMError(  # type: ignore[no-untyped-call]
            status_code=400, message='model "massgen/build" needs optional_params={"models": [...]}')

    msgs = [{"role": m.get("role"), "content": _text(m.get("content"))} for m in (dict(m) for m in messages)]
    system = "\n\n".join(m["content"] for m in msgs if m["role"] in ("system", "developer") and m["content"])
    convo = [m for m in msgs if m["role"] in ("user", "assistant")]
    if not convo or convo[-1]["role"] != "user":
        raise CustomLLMError(  # type: ignore[no-untyped-call]
            status_code=400, message="massgen: the last message must be the user's question")
    question = str(convo[-1]["content"])
    if system:
        question = f"{system}\n\n{question}"
    if len(convo) > 1:
        kw["history"] = convo[:-1]
    return question, kw


def _usage(finished: dict[str, Any]) -> Usage:
    u = finished.get("total_usage") or {}
    p, c = int(u.get("input_tokens", 0)), int(u.get("output_tokens", 0))
    return Usage(prompt_tokens=p, completion_tokens=c, total_tokens=p + c)


def _fill(model_response: ModelResponse, model: str, result: dict[str, Any], finished: dict[str, Any]) -> ModelResponse:
    model_response.choices[0].message.content = result["final_answer"]
    model_response.choices[0].finish_reason = "stop"
    model_response.created = int(time.time())
    model_response.model = model
    setattr(model_response, "usage", _usage(finished))
    # Upstream's extra block: who won and where the logs are.
    model_response._hidden_params["massgen_metadata"] = {
        "selected_agent": result["winner"],
        "vote_results": result["vote_results"],
        "log_directory": result["log_directory"],
        "session_id": result["session_id"],
        "final_answer_path": result["final_answer_path"],
        "answers": result["answers"],
        "cost": result["cost"],
    }
    return model_response


def _chunk(text: str, finished: dict[str, Any] | None = None) -> GenericStreamingChunk:
    return {
        "text": text,
        "tool_use": None,
        "is_finished": finished is not None,
        "finish_reason": "stop" if finished is not None else "",
        "usage": (
            {"prompt_tokens": _usage(finished).prompt_tokens, "completion_tokens": _usage(finished).completion_tokens,
             "total_tokens": _usage(finished).total_tokens}
            if finished is not None else None
        ),
        "index": 0,
    }


async def _chunks(question: str, kw: dict[str, Any]) -> AsyncIterator[GenericStreamingChunk]:
    """The final answer as it is presented, then a closing chunk with usage.
    Streamed text may be skipped by a busy binary; whatever the deltas did
    not carry is sent when the final answer is known."""
    sent = ""
    try:
        async for ev in _run.events(question, api=_API, **kw):
            t = ev.get("type")
            if t == "final_delta" and ev.get("text"):
                sent += ev["text"]
                yield _chunk(ev["text"])
            elif t == "final_answer" or t == "finished":
                final = ev.get("text") if t == "final_answer" else ev.get("final_answer")
                if final and final.startswith(sent) and len(final) > len(sent):
                    yield _chunk(final[len(sent):])
                    sent = final
                if t == "finished":
                    yield _chunk("", ev)
    except MassGenError as e:
        raise MassGenLiteLLMError(e) from e


def _sync_iter(agen_factory: Any) -> Iterator[Any]:
    """Iterate an async generator from sync code: it runs on its own loop in
    a thread; closing this iterator (or an exception here, Ctrl+C included)
    cancels it, which stops the binary."""
    q: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=64)
    loop = asyncio.new_event_loop()
    task_box: list[asyncio.Task[None]] = []

    async def pump() -> None:
        try:
            async for item in agen_factory():
                await loop.run_in_executor(None, q.put, ("item", item))
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            q.put(("error", e))
            return
        q.put(("done", None))

    def main() -> None:
        asyncio.set_event_loop(loop)
        task_box.append(loop.create_task(pump()))
        loop.run_until_complete(task_box[0])
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    th = threading.Thread(target=main, name="massgen-stream", daemon=True)
    th.start()
    ended = False  # the pump is done: nothing to cancel
    try:
        while True:
            kind, val = q.get()
            if kind == "item":
                yield val
                continue
            ended = True
            if kind == "error" and not isinstance(val, asyncio.CancelledError):
                raise val
            return
    finally:
        if not ended:
            while not task_box:
                time.sleep(0.001)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(task_box[0].cancel)
            while th.is_alive():  # drain so the pump never blocks on a full queue
                try:
                    q.get(timeout=0.05)
                except queue.Empty:
                    pass
        th.join()


class MassGenLLM(CustomLLM):
    """The LiteLLM handler: each call runs a team through the binary."""

    async def _run(self, model: str, messages: list[Any], optional_params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        question, kw = _request(model, messages, optional_params)
        seen = _run.Collector()
        finished: dict[str, Any] | None = None
        try:
            inv, where = _run.prepare(_API, question, kw)
            async for ev in _run.run_invocation(inv, **where):
                seen.add(ev)
                if ev.get("type") == "finished":
                    finished = ev
        except MassGenError as e:
            raise MassGenLiteLLMError(e) from e
        assert finished is not None
        return _run.result_from(finished, seen, inv.config_used), finished

    def completion(self, model: str, messages: list[Any], api_base: str, custom_prompt_dict: dict[str, Any], model_response: ModelResponse,
                   print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict[str, Any],
                   acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                   timeout: Any = None, client: Any = None) -> ModelResponse:
        results = list(_sync_iter(lambda: _one(self._run(model, messages, optional_params))))
        result, finished = results[0]
        return _fill(model_response, model, result, finished)

    async def acompletion(self, model: str, messages: list[Any], api_base: str, custom_prompt_dict: dict[str, Any], model_response: ModelResponse,
                          print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict[str, Any],
                          acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                          timeout: Any = None, client: Any = None) -> ModelResponse:
        result, finished = await self._run(model, messages, optional_params)
        return _fill(model_response, model, result, finished)

    def streaming(self, model: str, messages: list[Any], api_base: str, custom_prompt_dict: dict[str, Any], model_response: ModelResponse,
                  print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict[str, Any],
                  acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                  timeout: Any = None, client: Any = None) -> Iterator[GenericStreamingChunk]:
        question, kw = _request(model, messages, optional_params)
        return _sync_iter(lambda: _chunks(question, kw))

    # LiteLLM's base declares a coroutine, but iterates what it gets: an
    # async generator, as its own docs write it.
    async def astreaming(  # type: ignore[override]
        self, model: str, messages: list[Any], api_base: str, custom_prompt_dict: dict[str, Any], model_response: ModelResponse,
                         print_verbose: Any, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict[str, Any],
                         acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                         timeout: Any = None, client: Any = None) -> AsyncIterator[GenericStreamingChunk]:
        question, kw = _request(model, messages, optional_params)
        async for c in _chunks(question, kw):
            yield c


async def _one(coro: Any) -> AsyncIterator[Any]:
    yield await coro


handler = MassGenLLM()


def register() -> None:
    """Add the "massgen" provider to litellm.custom_provider_map (once)."""
    if not any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": handler})
    litellm.utils.custom_llm_setup()  # type: ignore[no-untyped-call]
