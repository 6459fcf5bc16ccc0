"""massgen serve, used from LiteLLM as an OpenAI-compatible server: the
``openai/`` provider prefix with ``api_base`` (the way LiteLLM reaches any
OpenAI-compatible endpoint; the model sent is what follows the prefix).
run.sh sets MASSGEN_BASE_URL (…/v1) and MASSGEN_API_KEY."""

import asyncio
import json
import os

# No network look-up of LiteLLM's model price list (read at import).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
import pytest  # noqa: E402

BASE_URL = os.environ["MASSGEN_BASE_URL"]
API_KEY = os.environ.get("MASSGEN_API_KEY", "none")
QUESTION = "What is the capital of France?"
RESULT = "18°C, sunny"


def complete(model, messages, **kw):
    return litellm.completion(model="openai/" + model, api_base=BASE_URL, api_key=API_KEY,
                              messages=messages, timeout=60, num_retries=0, **kw)


def test_completion():
    r = complete("massgen", [{"role": "user", "content": QUESTION}])
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].message.content
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0


def test_completion_streamed():
    chunks = list(complete("massgen", [{"role": "user", "content": QUESTION}], stream=True,
                           stream_options={"include_usage": True}))
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or ""
                        for c in chunks if c.choices)
    assert len(chunks) > 1 and content
    # The coordination progress arrives as reasoning, apart from the answer.
    assert "[massgen] winner: " in reasoning and "[massgen]" not in content
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["stop"]
    # stream_chunk_builder rebuilds the whole response, as LiteLLM's users do.
    whole = litellm.stream_chunk_builder(chunks)
    assert whole.choices[0].message.content == content


def test_acompletion():
    r = asyncio.run(litellm.acompletion(model="openai/massgen", api_base=BASE_URL, api_key=API_KEY,
                                        messages=[{"role": "user", "content": QUESTION}], timeout=60, num_retries=0))
    assert r.choices[0].message.content


def test_unknown_model_is_a_not_found_error():
    with pytest.raises(litellm.NotFoundError):
        complete("massgen/no-such-config", [{"role": "user", "content": QUESTION}])


def test_tool_round_trip():
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    r = complete("massgen/weather-litellm", messages, tools=tools)
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls"
    call = msg.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    messages += [msg.model_dump(), {"role": "tool", "tool_call_id": call.id, "content": RESULT}]
    final = complete("massgen/weather-litellm", messages, tools=tools)
    assert not final.choices[0].message.tool_calls
    assert RESULT in final.choices[0].message.content
