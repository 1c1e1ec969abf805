"""`/v1/images/generations` through Colloquy with the official OpenAI Python client: one image
as JSON, then a stream with partial images, then the Responses API's image_generation tool. Run by tests/api/image_generation.rs with
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

# The Responses API's image_generation tool: the model's generate_image call is an
# image_generation_call item, its partial images streamed as events.
with client.responses.stream(
    model="fake-model",
    input="Paint me a lighthouse.",
    tools=[{"type": "image_generation", "size": "256x256", "partial_images": 2}],
) as stream:
    kinds = []
    partials = []
    for event in stream:
        kinds.append(event.type)
        if event.type == "response.image_generation_call.partial_image":
            partials.append([event.output_index, event.partial_image_index, event.partial_image_b64])
    final = stream.get_final_response()
seen["responses_kinds"] = kinds
seen["responses_partials"] = partials
seen["responses_item"] = final.output[0].model_dump()
seen["responses_text"] = final.output_text

print(json.dumps(seen))
