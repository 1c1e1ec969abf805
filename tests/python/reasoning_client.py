"""Reads Colloquy's reasoning with the official OpenAI Python client, as a program would: the
`x_chat.reasoning` lines and their `reasoning_content` deltas in a stream, the stream helper,
`message.reasoning_content` and `x_metadata.thinking` without streaming, the reasoning tokens,
a follow-up turn in the same chat, and the Responses API's reasoning item (created, and
streamed through `responses.stream()`).

Run by tests/api/openai_python.rs with COLLOQUY_URL and COLLOQUY_KEY set, against a fake
upstream scripted for ROUNDS rounds of exactly these calls (one round per reasoning shape);
prints one JSON line: a list with what each round saw.
"""
import json
import os

from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
MESSAGES = [{"role": "user", "content": "Hi!"}]


def extra(model, key):
    return (model.model_extra or {}).get(key)


def comparable(response):
    raw = response.model_dump()
    for key in ("id", "created_at", "x_chat_id", "x_metadata", "conversation"):
        raw.pop(key, None)
    for item in raw["output"]:
        item.pop("id", None)
        for part in item.get("content") or []:
            part.pop("parsed", None)
    return raw


def one_round():
    seen = {}

    # 1. A plain stream: content deltas never carry reasoning; the reasoning lines do, both as
    # their own `delta` and as DeepSeek's `reasoning_content` in their choice.
    stream = client.chat.completions.create(
        model="fake-model", messages=MESSAGES, stream=True,
        stream_options={"include_usage": True},
    )
    content, via_type, via_choice, usage = "", "", "", None
    for chunk in stream:
        if extra(chunk, "type") == "x_chat.reasoning":
            via_type += extra(chunk, "delta")
        if extra(chunk, "type") == "x_chat.metadata":
            usage = chunk.usage
        if chunk.choices:
            delta = chunk.choices[0].delta
            content += delta.content or ""
            via_choice += extra(delta, "reasoning_content") or ""
    seen["stream_content"] = content
    seen["stream_reasoning"] = via_type
    seen["stream_reasoning_content"] = via_choice
    details = usage.completion_tokens_details if usage else None
    seen["stream_reasoning_tokens"] = details.reasoning_tokens if details else None

    # 2. The SDK's stream helper accumulates the same stream into the answer.
    with client.chat.completions.stream(model="fake-model", messages=MESSAGES) as helper:
        final = helper.get_final_completion()
    seen["helper_content"] = final.choices[0].message.content

    # 3. Without streaming.
    answer = client.chat.completions.create(model="fake-model", messages=MESSAGES)
    message = answer.choices[0].message
    seen["content"] = message.content
    seen["reasoning_content"] = extra(message, "reasoning_content")
    seen["thinking"] = extra(answer, "x_metadata").get("thinking")
    details = answer.usage.completion_tokens_details
    seen["reasoning_tokens"] = details.reasoning_tokens if details else None

    # 4. The same chat goes on (the test checks what the model was sent).
    chat_id = extra(answer, "x_chat_id")
    follow = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "And then?"}],
        extra_body={"x_chat_id": chat_id},
    )
    seen["follow_up"] = follow.choices[0].message.content

    # 5. The Responses API: a reasoning item before the message.
    created = client.responses.create(model="fake-model", input="Hi!")
    seen["response_types"] = [item.type for item in created.output]
    seen["response_summary"] = [part.text for part in created.output[0].summary] if created.output[0].type == "reasoning" else None
    seen["response_text"] = created.output_text
    seen["response_reasoning_tokens"] = created.usage.output_tokens_details.reasoning_tokens

    # 6. responses.stream(): the reasoning's lifecycle events, and the same final object.
    deltas, types = "", []
    with client.responses.stream(model="fake-model", input="Hi!") as stream:
        for event in stream:
            types.append(event.type)
            if event.type == "response.reasoning_summary_text.delta":
                deltas += event.delta
        streamed = stream.get_final_response()
    seen["stream_summary_deltas"] = deltas
    seen["stream_event_types"] = [t for t in types if "reasoning" in t or t == "response.output_item.added"]
    seen["stream_equals_created"] = comparable(streamed) == comparable(created)
    if not seen["stream_equals_created"]:
        seen["stream_diff"] = [comparable(streamed), comparable(created)]
    return seen


print(json.dumps([one_round() for _ in range(int(os.environ.get("ROUNDS", "1")))]))
