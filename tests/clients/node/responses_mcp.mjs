// Remote MCP on Colloquy's Responses API as the official OpenAI Node client uses it, against a
// real MCP server reached over streamable HTTP by URL ($MCP_URL): the same two phases, and the
// same JSON keys, as tests/python/responses_mcp.py.
//   node responses_mcp.mjs calls     listed tools and a call on a stream; then a call that waits
//                                    for approval
//   node responses_mcp.mjs approve   the approval ($RESPONSE_ID, $APPROVAL_ID) sent back, twice
// Run by tests/api/responses_mcp.rs with COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON line.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const server = {
  type: "mcp",
  server_label: "tests",
  server_url: process.env.MCP_URL,
  headers: { "X-Test": "secret-value" },
  allowed_tools: ["echo", "add"],
};
const seen = {};

if (process.argv[2] === "calls") {
  const stream = client.responses.stream({
    model: "fake-model",
    input: "Echo hi.",
    tools: [{ ...server, require_approval: "never" }],
  });
  const kinds = [];
  for await (const event of stream) kinds.push(event.type);
  const final = await stream.finalResponse();
  seen.kinds = kinds;
  seen.types = final.output.map((item) => item.type);
  const listed = final.output[0];
  seen.listed = {
    server_label: listed.server_label,
    tools: listed.tools.map((tool) => tool.name),
    echo_schema: listed.tools.find((tool) => tool.name === "echo").input_schema,
  };
  const call = final.output[1];
  seen.call = {
    name: call.name,
    server_label: call.server_label,
    arguments: JSON.parse(call.arguments),
    output: call.output,
    error: call.error,
  };
  seen.text = final.output_text;
  seen.echoed_headers = final.tools[0].headers;

  const asked = await client.responses.create({
    model: "fake-model",
    input: "Add 2 and 40.",
    tools: [{ ...server, require_approval: "always" }],
  });
  seen.asked_types = asked.output.map((item) => item.type);
  const request = asked.output[asked.output.length - 1];
  seen.request = {
    id: request.id,
    name: request.name,
    server_label: request.server_label,
    arguments: JSON.parse(request.arguments),
  };
  seen.asked_status = asked.status;
  seen.response_id = asked.id;
} else {
  const approval = {
    type: "mcp_approval_response",
    approval_request_id: process.env.APPROVAL_ID,
    approve: true,
  };
  const body = {
    model: "fake-model",
    previous_response_id: process.env.RESPONSE_ID,
    tools: [{ ...server, require_approval: "always" }],
    input: [approval],
  };
  const answered = await client.responses.create(body);
  seen.types = answered.output.map((item) => item.type);
  const call = answered.output.find((item) => item.type === "mcp_call");
  seen.call = { name: call.name, output: call.output, approval_request_id: call.approval_request_id };
  seen.text = answered.output_text;
  try {
    await client.responses.create(body);
    seen.again = "accepted";
  } catch (err) {
    seen.again = err.status;
  }
}

console.log(JSON.stringify(seen));
