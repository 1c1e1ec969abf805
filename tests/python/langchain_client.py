"""Drives Colloquy with LangChain's ChatOpenAI, as a LangChain app would.

Run by tests/api/openai_python.rs with COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON
line describing what it saw, and exits non-zero if LangChain rejected anything.
"""
import json
import os

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

llm = ChatOpenAI(
    base_url=os.environ["COLLOQUY_URL"] + "/v1",
    api_key=os.environ["COLLOQUY_KEY"],
    model="fake-model",
    stream_usage=True,
)

# Streaming with stream_usage=True: the chunks' usage adds up to the turn's, counted once.
merged = None
for chunk in llm.stream("Say hello"):
    merged = chunk if merged is None else merged + chunk


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return json.dumps({"sky": "clear", "city": city})


# bind_tools: the model calls the app's tool, the app runs it, the model answers.
bound = llm.bind_tools([get_weather])
question = HumanMessage("Weather in Oslo?")
called = bound.invoke([question])
result = get_weather.invoke(called.tool_calls[0])
answered = bound.invoke([question, called, result])


class Colour(BaseModel):
    name: str
    hex: str


colour = llm.with_structured_output(Colour, method="json_schema").invoke("A colour")

print(json.dumps({
    "streamed": merged.content,
    "usage": merged.usage_metadata,
    "tool_name": called.tool_calls[0]["name"],
    "tool_args": called.tool_calls[0]["args"],
    "tool_answer": answered.content,
    "colour": colour.model_dump(),
}))
