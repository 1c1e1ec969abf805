"""The Responses API's code_interpreter through Colloquy with the official OpenAI Python client:
a CSV uploaded with /v1/files, a streamed request whose (scripted) model runs pandas on it and
saves a chart, the chart read back with containers.files.content, then a second request in the
same container reading a variable the first set. Run by tests/api/code_interpreter.rs with
COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON line of what it saw.
"""
import base64
import json
import os

from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
seen = {}

csv = client.files.create(
    file=("scores.csv", b"name,score\nada,2\nbob,4\ncyd,9\n"), purpose="user_data"
)

with client.responses.stream(
    model="fake-model",
    input="What is the mean score? Plot the scores.",
    tools=[{"type": "code_interpreter", "container": {"type": "auto", "file_ids": [csv.id]}}],
    include=["code_interpreter_call.outputs"],
) as stream:
    kinds = []
    deltas = []
    for event in stream:
        kinds.append(event.type)
        if event.type == "response.code_interpreter_call_code.delta":
            deltas.append(event.delta)
    final = stream.get_final_response()
seen["kinds"] = kinds
seen["code_from_deltas"] = "".join(deltas)
call = next(item for item in final.output if item.type == "code_interpreter_call")
seen["call"] = call.model_dump()
message = next(item for item in final.output if item.type == "message")
seen["text"] = final.output_text
annotations = [a.model_dump() for a in message.content[0].annotations]
seen["annotations"] = annotations

chart = next(a for a in annotations if a["type"] == "container_file_citation"
             and a["filename"] == "chart.png")
content = client.containers.files.content.retrieve(chart["file_id"], container_id=chart["container_id"])
png = content.read()
seen["png_head"] = base64.b64encode(png[:8]).decode()
seen["png_bytes"] = len(png)
listed = client.containers.files.list(chart["container_id"])
seen["files"] = sorted(f.path for f in listed.data)
seen["container"] = client.containers.retrieve(chart["container_id"]).model_dump()

again = client.responses.create(
    model="fake-model",
    input="And again?",
    tools=[{"type": "code_interpreter", "container": chart["container_id"]}],
    include=["code_interpreter_call.outputs"],
)
second = next(item for item in again.output if item.type == "code_interpreter_call")
seen["second"] = second.model_dump()

made = client.containers.create(name="scratch")
seen["made"] = made.model_dump()
client.containers.delete(made.id)

print(json.dumps(seen))
