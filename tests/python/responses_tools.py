"""Seed 003's server-side tools as an official OpenAI Python client sees them on Colloquy's
Responses API: a web search on a default stream (web_search_call items and events, sources,
url_citation annotations), a local_shell call the client runs itself, and an artifact the model
made as a part of the answer; then the artifact on Chat Completions, plain and streamed; last,
web searches streamed exactly as a new user asks for them (OpenAI's tool type, nothing else).

Run by tests/api/responses_tools.rs with COLLOQUY_URL and COLLOQUY_KEY set, against
a fake upstream scripted for exactly this order of calls; prints one JSON line of what it saw.
"""
import json
import os

from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
seen = {}

# 1. A web search on a default stream (no x_events), with the pages it found.
with client.responses.stream(
    model="fake-model",
    input="What does gold cost?",
    tools=[{"type": "web_search_preview", "x_tools": ["web_search"]}],
    include=["web_search_call.action.sources"],
) as stream:
    kinds = []
    for event in stream:
        kinds.append(event.type)
        if event.type == "response.output_text.annotation.added":
            seen["annotation_event"] = event.annotation if isinstance(event.annotation, dict) \
                else event.annotation.model_dump()
    final = stream.get_final_response()
seen["web_kinds"] = kinds
seen["web_output_types"] = [item.type for item in final.output]
call = final.output[0]
seen["web_call"] = {
    "id": call.id,
    "status": call.status,
    "action_type": call.action.type,
    "query": call.action.query,
    "sources": [source.url for source in (call.action.sources or [])],
}
message = final.output[1]
seen["web_text"] = final.output_text
seen["web_annotations"] = [a.model_dump() for a in message.content[0].annotations]
plain = client.responses.create(
    model="fake-model",
    input="What does gold cost?",
    tools=[{"type": "web_search_preview", "x_tools": ["web_search"]}],
)
seen["plain_action"] = plain.output[0].action.model_dump(exclude_none=True)

# 2. local_shell: the model's call comes back for the client to run; its output continues.
first = client.responses.create(
    model="fake-model",
    input="List the files here.",
    tools=[{"type": "local_shell"}],
)
shell = first.output[0]
seen["shell_item"] = {
    "type": shell.type,
    "call_id": shell.call_id,
    "command": shell.action.command,
    "working_directory": shell.action.working_directory,
    "status": shell.status,
}
second = client.responses.create(
    model="fake-model",
    previous_response_id=first.id,
    tools=[{"type": "local_shell"}],
    input=[{"type": "local_shell_call_output", "id": shell.call_id, "output": "notes.txt\n"}],
)
seen["shell_answer"] = second.output_text

# 3. An artifact the model made is a part of the answer.
made = client.responses.create(model="fake-model", input="Write a Fibonacci function.")
parts = made.output[-1].model_dump()["content"]
seen["artifact_parts"] = parts

# 4. Chat Completions: the artifact beside the message's content, and in the streamed event.
completion = client.chat.completions.create(
    model="fake-model",
    messages=[{"role": "user", "content": "Write a Fibonacci function again."}],
)
seen["completion_artifacts"] = (completion.choices[0].message.model_extra or {}).get("x_artifacts")
streamed = client.chat.completions.create(
    model="fake-model",
    messages=[{"role": "user", "content": "And once more, streamed."}],
    stream=True,
)
created = None
for chunk in streamed:
    extra = chunk.model_extra or {}
    if extra.get("type") == "x_artifact.created":
        created = extra
seen["streamed_artifact"] = created.get("artifact") if created else None

# 5. A web search streamed as a new user asks for one: OpenAI's tool alone (its preview name, then
# its newer one), `stream=True`, nothing of Colloquy's (no extra_body, no x_* field).
def searched(item):
    action = item.action
    return {
        "id": item.id,
        "status": item.status,
        "action_type": getattr(action, "type", None),
        "query": getattr(action, "query", None),
    }


def new_user_stream(tool_type, question):
    kinds, done, completed, text = [], [], None, None
    for event in client.responses.create(
        model="fake-model", input=question, tools=[{"type": tool_type}], stream=True
    ):
        kinds.append(event.type)
        if event.type == "response.output_item.done" and event.item.type == "web_search_call":
            done.append(searched(event.item))
        if event.type == "response.completed":
            output = event.response.output
            completed = [searched(item) for item in output if item.type == "web_search_call"]
            text = "".join(part.text for item in output if item.type == "message"
                           for part in item.content if part.type == "output_text")
    return {
        "kinds": kinds,
        "x_kinds": [kind for kind in kinds if kind.startswith("x_")],
        "done_calls": done,
        "completed_calls": completed,
        "text": text,
    }


seen["new_user_preview"] = new_user_stream("web_search_preview", "What does silver cost?")
seen["new_user_web_search"] = new_user_stream("web_search", "What does platinum cost?")

print(json.dumps(seen, default=str))
