"""`/v1/images/generations` through Colloquy with the official OpenAI Python client: one image
as JSON, then a stream with partial images. Run by tests/api/image_generation.rs with
COLLOQUY_URL and COLLOQUY_KEY set, against a fake image server; prints one JSON line of what it
saw.
"""
import json
import os

from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
seen = {}

made = client.images.generate(prompt="a lighthouse at dusk", size="256x256")
seen["b64"] = made.data[0].b64_json
seen["revised_prompt"] = made.data[0].revised_prompt

stream = client.images.generate(
    prompt="a lighthouse at dusk", size="256x256", stream=True, partial_images=2
)
events = []
for event in stream:
    events.append([event.type, getattr(event, "partial_image_index", None), event.b64_json])
seen["stream"] = events

print(json.dumps(seen))
