"""massgen serve, used from LlamaIndex (llama-index-llms-openai-like, the
LLM class for OpenAI-compatible servers): complete, chat, their streams,
async, and a tool round trip. It needs openai<3, so run.sh runs it in a
virtualenv of its own (requirements-llamaindex.txt), with
MASSGEN_BASE_URL (…/v1) and MASSGEN_API_KEY set."""

import asyncio
import os

from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai_like import OpenAILike

BASE_URL = os.environ["MASSGEN_BASE_URL"]
API_KEY = os.environ.get("MASSGEN_API_KEY", "none")
QUESTION = "What is the capital of France?"
RESULT = "18°C, sunny"


def llm(model="massgen", **kw):
    # is_chat_model: complete() goes through /v1/chat/completions (massgen
    # serves no legacy /v1/completions).
    return OpenAILike(model=model, api_base=BASE_URL, api_key=API_KEY, is_chat_model=True,
                      context_window=128000, timeout=60, max_retries=0, **kw)


def test_complete_and_chat():
    r = llm().complete(QUESTION)
    assert r.text and "[massgen]" not in r.text
    c = llm().chat([ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content=QUESTION)])
    assert c.message.role == "assistant" and c.message.content
    assert c.raw.model_extra["massgen"]["status"] == "completed"


def test_streams():
    deltas = [r.delta for r in llm().stream_complete(QUESTION)]
    text = "".join(d or "" for d in deltas)
    assert len(deltas) > 1 and text and "[massgen]" not in text
    last = None
    for last in llm().stream_chat([ChatMessage(role="user", content=QUESTION)]):
        pass
    assert last is not None and last.message.content


def test_async():
    async def go():
        r = await llm().acomplete(QUESTION)
        chunks = [c async for c in await llm().astream_chat([ChatMessage(role="user", content=QUESTION)])]
        return r, chunks
    r, chunks = asyncio.run(go())
    assert r.text and chunks and chunks[-1].message.content


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return RESULT


def test_tool_round_trip():
    model = llm("massgen/weather-llamaindex", is_function_calling_model=True)
    tool = FunctionTool.from_defaults(fn=get_weather)
    messages = [ChatMessage(role="user", content="Weather in Paris?")]
    r = model.chat_with_tools([tool], chat_history=messages)
    calls = model.get_tool_calls_from_response(r, error_on_no_tool_call=True)
    assert [(c.tool_name, c.tool_kwargs) for c in calls] == [("get_weather", {"city": "Paris"})]
    messages += [r.message, ChatMessage(role="tool", content=tool(**calls[0].tool_kwargs).content,
                                        additional_kwargs={"tool_call_id": calls[0].tool_id})]
    final = model.chat_with_tools([tool], chat_history=messages)
    assert not model.get_tool_calls_from_response(final, error_on_no_tool_call=False)
    assert RESULT in final.message.content
