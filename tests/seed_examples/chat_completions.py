# The specification's Python Chat Completions examples and its documents API example in Python
# (requests), as written (docs/spec.md#examples): only the base URL, key, model, chat id, session
# token and document id are substituted (from the environment). Each example is one function; all
# run in order.
import os
import sys

BASE_URL = os.environ["COLLOQUY_URL"] + "/v1"
API_KEY = os.environ["COLLOQUY_KEY"]
MODEL = "fake-model"


def all_tools_enabled():
    from openai import OpenAI
    client = OpenAI(
        base_url=BASE_URL,
        api_key=API_KEY,
    )
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "user", "content": "Compare the async runtimes in Rust and explain the tradeoffs"}
        ],
        stream=True,
        extra_body={
            "web_search_options": {
                "search_context_size": "high",
                "max_iterations": 8,
                "x_tools": [
                    "web_search", "fetch_url", "code_search",
                    "gitlab_code_search", "calculator"
                ]
            }
        },
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            print(chunk.choices[0].delta.content, end="")
    print()


def multi_tool_conversation_flow():
    import json
    from openai import OpenAI
    client = OpenAI(
        base_url=BASE_URL,
        api_key=API_KEY,
    )
    # The model may chain: web_search -> fetch_url -> calculator
    # all server-side in a single request
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[
            {
                "role": "user",
                "content": "What is the current price of gold per ounce, "
                "and how much would 3.5 troy ounces cost in EUR "
                "at today's exchange rate?"
            }
        ],
        stream=True,
        extra_body={
            "web_search_options": {
                "search_context_size": "medium",
                "max_iterations": 6,
                "x_tools": ["web_search", "fetch_url", "calculator"]
            }
        },
    )
    for chunk in stream:
        raw = chunk.model_dump()
        # Check for research progress events
        if "type" in raw and raw["type"].startswith("x_research."):
            event_type = raw["type"]
            if event_type == "x_research.searching":
                print(f"[Searching] {raw.get('arguments', '')}")
            elif event_type == "x_research.reading":
                print(f"[Reading] {raw.get('arguments', '')}")
            elif event_type == "x_research.calculating":
                print(f"[Calculating] {raw.get('arguments', '')}")
            elif event_type == "x_research.complete":
                print(f"[Research complete] {raw.get('iterations', 0)} iterations, "
                      f"{raw.get('elapsed_ms', 0)}ms")
            continue
        # Normal content chunks
        if chunk.choices and chunk.choices[0].delta.content:
            print(chunk.choices[0].delta.content, end="")
    print()


def deep_think():
    import json
    from openai import OpenAI
    client = OpenAI(
        base_url=BASE_URL,
        api_key=API_KEY,
    )
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "user", "content": "Comprehensive analysis of quantum computing advances in 2026"}
        ],
        stream=True,
        extra_body={
            "web_search_options": {
                "search_context_size": "medium",
                "x_deep_think": True,
                "x_tools": ["web_search", "fetch_url", "code_search", "calculator"]
            }
        },
    )
    for chunk in stream:
        raw = chunk.model_dump()
        # Check for deep think progress events
        if "type" in raw and raw["type"].startswith("x_deep_think."):
            print(f"[{raw['type']}]", json.dumps(raw, indent=2))
            continue
        # Normal content chunks
        if chunk.choices and chunk.choices[0].delta.content:
            print(chunk.choices[0].delta.content, end="")
    print()


def artifact_creation_flow():
    import json
    from openai import OpenAI
    client = OpenAI(
        base_url=BASE_URL,
        api_key=API_KEY,
    )
    # In the chat context, create_artifact and update_artifact
    # are always available. The model will use them when appropriate.
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[
            {
                "role": "user",
                "content": "Create a Python script that implements a "
                "binary search tree with insert, search, and "
                "in-order traversal methods."
            }
        ],
        stream=True,
    )
    for chunk in stream:
        raw = chunk.model_dump()
        # Check for artifact events
        if "type" in raw:
            if raw["type"] == "x_artifact.created":
                print(f"\n[Artifact created] {raw.get('identifier', '')} "
                      f"- {raw.get('title', '')} (v{raw.get('version', 1)})")
            elif raw["type"] == "x_artifact.updated":
                print(f"\n[Artifact updated] {raw.get('identifier', '')} "
                      f"(v{raw.get('version', '')})")
            continue
        if chunk.choices and chunk.choices[0].delta.content:
            print(chunk.choices[0].delta.content, end="")
    print()


def document_management():
    # The documents API example, Python (requests).
    import requests
    base = os.environ["COLLOQUY_URL"] + "/chat/api"
    chat_id = os.environ["CHAT_ID"]
    cookies = {"session": os.environ["SESSION"]}
    # List documents
    docs = requests.get(f"{base}/{chat_id}/documents", cookies=cookies).json()
    for doc in docs["documents"]:
        print(f"{doc['filename']} ({doc['status']}) - {doc['size']} bytes")
    # Delete a document
    requests.delete(
        f"{base}/{chat_id}/documents/{os.environ['DOCUMENT_ID']}",
        cookies=cookies
    )


for example in sys.argv[1:]:
    print(f"== {example}")
    globals()[example]()
