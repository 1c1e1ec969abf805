"""Drives Colloquy with the official OpenAI Python client, as a user's program would.

Run by tests/api/openai_python.rs with COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON
line describing what it saw, and exits non-zero if the client rejected anything.
"""
import json
import os

from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])

stream = client.chat.completions.create(
    model="fake-model",
    messages=[{"role": "user", "content": "What is 2^10?"}],
    stream=True,
    extra_body={"web_search_options": {"max_iterations": 3, "x_tools": ["calculator"]}},
)
event_types = []
streamed = ""
finish_reasons = []
for chunk in stream:
    raw = chunk.model_dump()
    if raw.get("type"):
        event_types.append(raw["type"])
        continue
    if chunk.choices:
        choice = chunk.choices[0]
        if choice.delta and choice.delta.content:
            streamed += choice.delta.content
        if choice.finish_reason:
            finish_reasons.append(choice.finish_reason)

# The SDK's stream helper accumulates every chunk; typed x_* lines must not break it, and with
# include_usage the usage arrives once.
with client.chat.completions.stream(
    model="fake-model",
    messages=[{"role": "user", "content": "What is 3^3?"}],
    stream_options={"include_usage": True},
    extra_body={"web_search_options": {"max_iterations": 3, "x_tools": ["calculator"]}},
) as helper:
    usage_lines = 0
    for event in helper:
        if event.type == "chunk" and event.chunk.usage is not None:
            usage_lines += 1
    helped = helper.get_final_completion()

completion = client.chat.completions.create(
    model="fake-model",
    messages=[{"role": "user", "content": "Say hello"}],
)

# A function-calling round trip: the model calls the client's tool, the client answers it.
weather_tool = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
asked = [{"role": "user", "content": "Weather in Oslo?"}]
first = client.chat.completions.create(model="fake-model", messages=asked, tools=[weather_tool])
call = first.choices[0].message.tool_calls[0]
answered = client.chat.completions.create(
    model="fake-model",
    tools=[weather_tool],
    messages=asked + [first.choices[0].message.model_dump(exclude_none=True),
                      {"role": "tool", "tool_call_id": call.id,
                       "content": json.dumps({"sky": "clear"})}],
)

# Structured output: parse() sends a JSON schema and validates the answer with the model.
from pydantic import BaseModel


class Colour(BaseModel):
    name: str
    hex: str


parsed = client.chat.completions.parse(
    model="fake-model",
    messages=[{"role": "user", "content": "A colour"}],
    response_format=Colour,
).choices[0].message.parsed

models = [model.id for model in client.models.list()]
retrieved = client.models.retrieve("fake-model").id
try:
    client.models.retrieve("no-such-model")
    missing = "found"
except Exception as err:  # the SDK raises NotFoundError
    missing = type(err).__name__

# The SDK asks for base64 by default and decodes it; a list of floats when asked for "float".
embedded = client.embeddings.create(model="any", input=["first text", "second text"])
as_floats = client.embeddings.create(model="any", input="first text", encoding_format="float")

print(json.dumps({
    "event_types": event_types,
    "streamed": streamed,
    "finish_reasons": finish_reasons,
    "non_stream": completion.choices[0].message.content,
    "non_stream_finish": completion.choices[0].finish_reason,
    "total_tokens": completion.usage.total_tokens,
    "models": models,
    "tool_finish": first.choices[0].finish_reason,
    "tool_name": call.function.name,
    "tool_arguments": json.loads(call.function.arguments),
    "tool_answer": answered.choices[0].message.content,
    "parsed": parsed.model_dump(),
    "helper_content": helped.choices[0].message.content,
    "helper_usage_lines": usage_lines,
    "helper_total_tokens": helped.usage.total_tokens if helped.usage else None,
    "retrieved": retrieved,
    "missing": missing,
    "embedding_model": embedded.model,
    "embeddings": [item.embedding for item in embedded.data],
    "float_embedding": as_floats.data[0].embedding,
    "embedding_tokens": embedded.usage.prompt_tokens,
}))
