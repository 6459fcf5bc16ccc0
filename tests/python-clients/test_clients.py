"""massgen serve, checked with the official ``openai`` Python client and
``langchain-openai``. run.sh starts ``massgen serve`` (default config: the
three simulated agents; massgen/weather-*: one agent scripted to call the
client's get_weather tool once) and runs pytest here with MASSGEN_BASE_URL
(…/v1) and MASSGEN_API_KEY set."""

import os

import openai
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

BASE_URL = os.environ["MASSGEN_BASE_URL"]
API_KEY = os.environ.get("MASSGEN_API_KEY", "none")
QUESTION = "What is the capital of France?"
RESULT = "18°C, sunny"


@pytest.fixture(scope="module")
def client():
    return openai.OpenAI(base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=60)


def test_chat_completion(client):
    r = client.chat.completions.create(model="massgen", messages=[{"role": "user", "content": QUESTION}])
    assert r.object == "chat.completion"
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].message.content
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0
    assert r.model_extra["massgen"]["status"] == "completed"


def test_chat_completion_streamed(client):
    stream = client.chat.completions.create(
        model="massgen", messages=[{"role": "user", "content": QUESTION}], stream=True,
        stream_options={"include_usage": True})
    content, reasoning, usage, finish = "", "", None, None
    reasoning_after_content = False
    for chunk in stream:
        usage = chunk.usage or usage
        for c in chunk.choices:
            r = (c.delta.model_extra or {}).get("reasoning_content") or ""
            reasoning_after_content |= bool(r and content)
            reasoning += r
            content += c.delta.content or ""
            finish = c.finish_reason or finish
    assert content and finish == "stop" and usage.total_tokens > 0
    assert "[massgen] winner: " in reasoning
    # Clients show reasoning after the answer as a second block.
    assert not reasoning_after_content


def test_responses(client):
    r = client.responses.create(model="massgen", input=QUESTION, instructions="Be brief.", metadata={"k": "v"})
    assert r.status == "completed" and r.output_text
    assert r.instructions == "Be brief." and r.metadata == {"k": "v"}
    # Continued with previous_response_id: the team sees the first turn.
    r2 = client.responses.create(model="massgen", input="And of Italy?", previous_response_id=r.id)
    assert r2.previous_response_id == r.id and r2.output_text


def test_responses_input_items(client):
    r = client.responses.create(model="massgen", input=QUESTION)
    r2 = client.responses.create(
        model="massgen",
        previous_response_id=r.id,
        input=[{"role": "user", "content": "And of Italy?"},
               {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{}"},
               {"type": "function_call_output", "call_id": "call_1", "output": "Rome"}],
    )
    # Its own input items only, newest first, paged by the SDK.
    items = list(client.responses.input_items.list(r2.id, limit=1))
    assert [i.type for i in items] == ["function_call_output", "function_call", "message"]
    assert items[0].output == "Rome" and items[1].name == "lookup"
    assert items[2].role == "user" and items[2].content[0].text == "And of Italy?"
    first = client.responses.input_items.list(r.id, order="asc")
    assert [c.text for c in first.data[0].content] == [QUESTION] and not first.has_more


def test_responses_retrieve_and_delete(client):
    r = client.responses.create(model="massgen", input=QUESTION)
    got = client.responses.retrieve(r.id)
    assert got.id == r.id and got.output_text == r.output_text
    client.responses.delete(r.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(r.id)
    # Made with store: false, a response is kept nowhere.
    unkept = client.responses.create(model="massgen", input=QUESTION, store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(unkept.id)


def test_responses_streamed(client):
    # The SDK's stream helper rebuilds the Response from the events, and
    # checks that they follow one another as the API sends them.
    with client.responses.stream(model="massgen", input=QUESTION) as stream:
        deltas = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response()
    assert final.status == "completed" and final.output_text
    assert final.output_text.endswith(deltas[-20:])
    whole = client.responses.create(model="massgen", input=QUESTION)
    assert [i.type for i in whole.output] == [i.type for i in final.output]


def test_structured_output_that_does_not_conform_is_a_clear_error(client):
    # The simulated team answers prose: 422, which the SDK raises (and
    # does not retry: a team run is too dear a retry).
    with pytest.raises(openai.UnprocessableEntityError, match="not JSON"):
        client.chat.completions.create(
            model="massgen", messages=[{"role": "user", "content": QUESTION}],
            response_format={"type": "json_schema", "json_schema": {
                "name": "capital", "schema": {"type": "object", "properties": {"city": {"type": "string"}}}}})


def langchain(model, **kw):
    return ChatOpenAI(model=model, base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=60, **kw)


def test_langchain_invoke_and_stream():
    llm = langchain("massgen")
    msg = llm.invoke(QUESTION)
    assert msg.content and msg.response_metadata["finish_reason"] == "stop"
    chunks = list(llm.stream(QUESTION))
    assert len(chunks) > 1 and "".join(c.content for c in chunks)


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return RESULT


@pytest.mark.parametrize("model,responses_api", [("massgen/weather-langchain", False),
                                                 ("massgen/weather-langchain-responses", True)])
def test_langchain_tool_round_trip(model, responses_api):
    llm = langchain(model, use_responses_api=responses_api).bind_tools([get_weather])
    messages = [HumanMessage("Weather in Paris?")]
    ai = llm.invoke(messages)
    assert [c["name"] for c in ai.tool_calls] == ["get_weather"]
    assert ai.tool_calls[0]["args"] == {"city": "Paris"}
    messages += [ai, ToolMessage(get_weather.invoke(ai.tool_calls[0]["args"]), tool_call_id=ai.tool_calls[0]["id"])]
    final = llm.invoke(messages)
    assert not final.tool_calls
    assert RESULT in final.text
