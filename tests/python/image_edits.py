"""`/v1/images/edits` as the official OpenAI Python client sends it: a picture (OpenAI's form)
and a prompt, passed through to the fake image server; a file that is not a picture is refused.

Run by tests/api/image_generation.rs with COLLOQUY_URL, COLLOQUY_KEY and PICTURE (the base64 of a
PNG) set; prints one JSON line of what it saw.
"""
import base64
import json
import os

import openai
from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
picture = base64.b64decode(os.environ["PICTURE"])
seen = {}

edited = client.images.edit(
    image=("lighthouse.png", picture, "image/png"),
    prompt="Add a boat",
    size="256x256",
)
seen["b64"] = edited.data[0].b64_json
seen["revised_prompt"] = edited.data[0].revised_prompt

try:
    client.images.edit(image=("notes.txt", b"not a picture", "text/plain"), prompt="Add a boat")
    seen["not_a_picture"] = "accepted"
except openai.APIStatusError as err:
    seen["not_a_picture"] = {"status": err.status_code, "code": err.code}

print(json.dumps(seen))
