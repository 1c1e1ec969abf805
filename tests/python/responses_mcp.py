"""Remote MCP on Colloquy's Responses API as an official OpenAI Python client uses it, against a
real MCP server reached over streamable HTTP by URL ($MCP_URL).

    responses_mcp.py calls     a stream whose tools need no approval: mcp_list_tools, then an
                               mcp_call with the server's output; then a request that waits
                               for approval (an mcp_approval_request)
    responses_mcp.py approve   the approval ($RESPONSE_ID, $APPROVAL_ID) sent back: the call is
                               made and the answer goes on; sent again, it is a conflict

Run by tests/api/responses_mcp.rs with COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON line.
"""
import json
import os
import sys

import openai
from openai import OpenAI

client = OpenAI(base_url=os.environ["COLLOQUY_URL"] + "/v1", api_key=os.environ["COLLOQUY_KEY"])
server = {
    "type": "mcp",
    "server_label": "tests",
    "server_url": os.environ["MCP_URL"],
    "headers": {"X-Test": "secret-value"},
    "allowed_tools": ["echo", "add"],
}
seen = {}

if sys.argv[1] == "calls":
    with client.responses.stream(
        model="fake-model",
        input="Echo hi.",
        tools=[dict(server, require_approval="never")],
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    seen["kinds"] = kinds
    seen["types"] = [item.type for item in final.output]
    listed = final.output[0]
    seen["listed"] = {
        "server_label": listed.server_label,
        "tools": [tool.name for tool in listed.tools],
        "echo_schema": [t.input_schema for t in listed.tools if t.name == "echo"][0],
    }
    call = final.output[1]
    seen["call"] = {
        "name": call.name,
        "server_label": call.server_label,
        "arguments": json.loads(call.arguments),
        "output": call.output,
        "error": call.error,
    }
    seen["text"] = final.output_text
    seen["echoed_headers"] = final.tools[0].headers

    asked = client.responses.create(
        model="fake-model",
        input="Add 2 and 40.",
        tools=[dict(server, require_approval="always")],
    )
    seen["asked_types"] = [item.type for item in asked.output]
    request = asked.output[-1]
    seen["request"] = {
        "id": request.id,
        "name": request.name,
        "server_label": request.server_label,
        "arguments": json.loads(request.arguments),
    }
    seen["asked_status"] = asked.status
    seen["response_id"] = asked.id
else:
    approval = {
        "type": "mcp_approval_response",
        "approval_request_id": os.environ["APPROVAL_ID"],
        "approve": True,
    }
    answered = client.responses.create(
        model="fake-model",
        previous_response_id=os.environ["RESPONSE_ID"],
        tools=[dict(server, require_approval="always")],
        input=[approval],
    )
    seen["types"] = [item.type for item in answered.output]
    call = [item for item in answered.output if item.type == "mcp_call"][0]
    seen["call"] = {
        "name": call.name,
        "output": call.output,
        "approval_request_id": call.approval_request_id,
    }
    seen["text"] = answered.output_text
    try:
        client.responses.create(
            model="fake-model",
            previous_response_id=os.environ["RESPONSE_ID"],
            tools=[dict(server, require_approval="always")],
            input=[approval],
        )
        seen["again"] = "accepted"
    except openai.APIStatusError as err:
        seen["again"] = err.status_code

print(json.dumps(seen))
