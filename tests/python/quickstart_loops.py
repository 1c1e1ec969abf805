# OpenAI's quickstart loops, exactly as users copy them, against Colloquy: the Chat Completions
# loop that reads `chunk.choices[0].delta` on every chunk (a plain stream, one with server-side
# tools on, and one that ends in an error), and the Responses stream helper with server-side
# tools on, to its final response. Run by tests/api/openai_python.rs with COLLOQUY_URL and
# COLLOQUY_KEY set; prints one JSON line of what it saw.
import json
import os

from openai import APIError, OpenAI

client = OpenAI(base_url=f"{os.environ['COLLOQUY_URL']}/v1", api_key=os.environ["COLLOQUY_KEY"])
seen = {}


def quickstart(question, **extra):
    """The quickstart's loop; returns the text and the number of chunks it read."""
    stream = client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": question}],
        stream=True,
        **extra,
    )
    text = []
    for chunk in stream:
        text.append(chunk.choices[0].delta.content or "")
    return "".join(text), len(text)


seen["plain"], _ = quickstart("Say hello")
seen["tools"], seen["tools_chunks"] = quickstart(
    "What is 2^10?", extra_body={"web_search_options": {"x_tools": ["calculator"]}}
)

# A stream that breaks off: the loop reads the text so far, then the SDK raises the error the
# stream's error line carries (not an IndexError at a chunk without choices).
partial = []
try:
    stream = client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "Tell me"}], stream=True
    )
    for chunk in stream:
        partial.append(chunk.choices[0].delta.content or "")
    seen["error"] = None
except APIError as error:
    seen["error"] = type(error).__name__
    seen["error_message"] = error.message
seen["partial"] = "".join(partial)

# responses.stream() with server-side tools on, to get_final_response().
calc = [{"type": "web_search_preview", "x_tools": ["calculator"]}]
with client.responses.stream(model="fake-model", input="What is 6*7?", tools=calc) as stream:
    seen["responses_event_types"] = sorted({event.type for event in stream})
    final = stream.get_final_response()
seen["responses_text"] = final.output_text
seen["responses_status"] = final.status

print(json.dumps(seen))
