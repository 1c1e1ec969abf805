"""An image round trip with the official OpenAI Python client, as a user's program would send one.

Chat Completions with an `image_url` part in a stored chat, then the next turn in that chat
(x_chat_id) with text only; the Responses API with an `input_image`, then a follow-up by
previous_response_id. Run by tests/api/images.rs with COLLOQUY_URL and COLLOQUY_KEY set; prints
one JSON line describing what it saw, and exits non-zero if the client rejected anything.
"""
import json
import os

from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
# A 1x1 transparent PNG.
PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQAB"
    "DQottAAAAABJRU5ErkJggg=="
)

first = client.chat.completions.create(
    model="fake-model",
    messages=[{
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": PIXEL}},
        ],
    }],
)
chat_id = first.model_extra["x_chat_id"]

# The next turn in the same chat, streamed: only the new question is sent.
second = ""
for chunk in client.chat.completions.create(
    model="fake-model",
    messages=[{"role": "user", "content": "And what colour is it?"}],
    stream=True,
    extra_body={"x_chat_id": chat_id},
):
    if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
        second += chunk.choices[0].delta.content

response = client.responses.create(
    model="fake-model",
    input=[{
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Describe this image."},
            {"type": "input_image", "image_url": PIXEL},
        ],
    }],
)
follow_up = client.responses.create(
    model="fake-model",
    previous_response_id=response.id,
    input="Is it transparent?",
)

print(json.dumps({
    "first": first.choices[0].message.content,
    "chat_id": chat_id,
    "second": second,
    "response": response.output_text,
    "follow_up": follow_up.output_text,
}))
