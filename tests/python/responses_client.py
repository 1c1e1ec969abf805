"""Drives Colloquy's stateful Responses API with the official OpenAI Python client: the stream
helper against a plain call, previous_response_id, retrieve/delete/input items, a function-tool
round trip, a conversation, files and vector stores behind file_search, and the specification's
Responses examples as written (docs/spec.md#examples; only the base URL, key, model and vector
store id substituted).

Run by tests/api/responses_sdk.rs with COLLOQUY_URL and COLLOQUY_KEY set, against a fake
upstream scripted for exactly this order of calls; prints one JSON line of what it saw.
"""
import json
import os
import time

import openai
from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
seen = {}


def comparable(response):
    """A response without what differs between two runs of the same script."""
    raw = response.model_dump()
    for key in ("id", "created_at", "x_chat_id", "x_metadata", "conversation"):
        raw.pop(key, None)
    for item in raw["output"]:
        item.pop("id", None)
        # The stream helper's parsed form adds `parsed` (null without a text format).
        for part in item.get("content") or []:
            part.pop("parsed", None)
    return raw


# 1. responses.stream() ends with the same response as a plain call of the same script.
calc = [{"type": "web_search_preview", "x_tools": ["calculator"]}]
plain = client.responses.create(model="fake-model", input="What is 6*7?", tools=calc)
with client.responses.stream(model="fake-model", input="What is 6*7?", tools=calc) as stream:
    kinds = []
    for event in stream:
        kinds.append(event.type)
    final = stream.get_final_response()
seen["stream_equals_plain"] = comparable(final) == comparable(plain)
seen["stream_diff"] = [comparable(final), comparable(plain)] if not seen["stream_equals_plain"] else None
seen["stream_kinds"] = kinds
seen["final_text"] = final.output_text

# 2. previous_response_id continues the conversation.
first = client.responses.create(model="fake-model", input="My name is Ada.")
second = client.responses.create(
    model="fake-model", input="What is my name?", previous_response_id=first.id
)
seen["second_text"] = second.output_text
seen["second_previous"] = second.previous_response_id == first.id

# 3. Retrieve, input items, delete.
again = client.responses.retrieve(first.id)
seen["retrieved_text"] = again.output_text
seen["retrieved_status"] = again.status
items = client.responses.input_items.list(second.id)
seen["input_items"] = [(i.type, i.role, i.content[0].text) for i in items.data]
client.responses.delete(first.id)
try:
    client.responses.retrieve(first.id)
    seen["deleted_is_gone"] = False
except openai.NotFoundError:
    seen["deleted_is_gone"] = True

# 4. A function-tool round trip, with server-side tools still there.
weather = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]},
}
asked = client.responses.create(
    model="fake-model", input="Weather in Oslo, and 2+2?", tools=[weather] + calc
)
calls = [item for item in asked.output if item.type == "function_call"]
seen["function_call"] = [(c.name, json.loads(c.arguments)) for c in calls]
answered = client.responses.create(
    model="fake-model",
    previous_response_id=asked.id,
    input=[{"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny"}],
    tools=[weather] + calc,
)
seen["function_answer"] = answered.output_text
seen["ids"] = {"response": second.id}

# 5. A conversation made over the API, continued.
conversation = client.conversations.create(
    items=[{"type": "message", "role": "user", "content": "Remember: my color is blue."}],
    metadata={"topic": "colors"},
)
in_conversation = client.responses.create(
    model="fake-model", input="What is my color?", conversation=conversation.id
)
seen["conversation_text"] = in_conversation.output_text
seen["conversation_id"] = conversation.id
conversation_items = client.conversations.items.list(conversation.id, order="asc")
seen["conversation_items"] = [(i.role, i.content[0].text) for i in conversation_items.data]
seen["conversation_metadata"] = client.conversations.retrieve(conversation.id).metadata

# 6. Files, vector stores, file_search with vector_store_ids, include both ways.
uploaded = client.files.create(
    file=("sharding.md", b"# Sharding\n\nDatabase sharding uses hash-based partitioning "
          b"across sixteen shards.\n"),
    purpose="assistants",
)
seen["file"] = [uploaded.filename, uploaded.bytes, uploaded.purpose]
store = client.vector_stores.create(name="Design docs", file_ids=[uploaded.id])
for _ in range(300):
    files = client.vector_stores.files.list(store.id)
    if files.data and all(f.status == "completed" for f in files.data):
        break
    time.sleep(0.05)
seen["store_files"] = [(f.id, f.status) for f in files.data]
seen["ids"].update({"file": uploaded.id, "store": store.id, "conversation": conversation.id})
seen["store_counts"] = client.vector_stores.retrieve(store.id).file_counts.completed
found = client.vector_stores.search(store.id, query="hash partitioning")
seen["search"] = [(r.filename, r.content[0].text.startswith("# Sharding")) for r in found.data]

search = [{"type": "file_search", "vector_store_ids": [store.id]}]
with_text = client.responses.create(
    model="fake-model", input="How is the database sharded?", tools=search,
    include=["file_search_call.results"],
)
without_text = client.responses.create(
    model="fake-model", input="How is the database sharded?", tools=search,
)
seen["with_results"] = with_text.output[0].model_dump()
seen["without_results"] = without_text.output[0].model_dump()
seen["file_search_answer"] = without_text.output_text

# 7. The spec's Responses example with web and file search, as written.
response = client.responses.create(
model="fake-model",
input="Compare the uploaded design spec with current best practices for REST API design",
stream=True,
tools=[
{
"type": "web_search_preview",
"search_context_size": "medium",
"x_tools": ["web_search", "fetch_url"],
},
{
"type": "file_search",
"vector_store_ids": [store.id],
},
],
)
seed_events = []
for event in response:
    if hasattr(event, "type"):
        print(event, file=open(os.devnull, "w"))
        seed_events.append(event.type)
seen["seed000_events"] = seed_events

# 8. The spec's file_search Responses request, as written (a file_search over the chat's
# documents).
seed002 = client.responses.create(
    model="fake-model",
    input="What does the architecture document say about database sharding?",
    tools=[{"type": "file_search"}],
    include=["file_search_call.results"],
    stream=True,
)
seen["seed002_events"] = [event.type for event in seed002]

print(json.dumps(seen))
