// Seed 003's server-side tools as the official OpenAI Node client sees them on Colloquy's
// Responses API: a web search on a default stream (web_search_call items and events, sources,
// url_citation annotations), a local_shell call the client runs itself, and an artifact the model
// made as a part of the answer; then the artifact on Chat Completions, plain and streamed; last,
// web searches streamed exactly as a new user asks for them (OpenAI's tool type, nothing else).
// Run by tests/api/responses_tools.rs with COLLOQUY_URL and COLLOQUY_KEY set, against a fake
// upstream scripted for exactly this order of calls; prints one JSON line of what it saw (the same
// keys as tests/python/responses_tools.py).
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const seen = {};
const web = [{ type: "web_search_preview", x_tools: ["web_search"] }];

// 1. A web search on a default stream (no x_events), with the pages it found.
const stream = client.responses.stream({
  model: "fake-model",
  input: "What does gold cost?",
  tools: web,
  include: ["web_search_call.action.sources"],
});
const kinds = [];
for await (const event of stream) {
  kinds.push(event.type);
  if (event.type === "response.output_text.annotation.added") seen.annotation_event = event.annotation;
}
const final = await stream.finalResponse();
seen.web_kinds = kinds;
seen.web_output_types = final.output.map((item) => item.type);
const call = final.output[0];
seen.web_call = {
  id: call.id,
  status: call.status,
  action_type: call.action.type,
  query: call.action.query,
  sources: (call.action.sources ?? []).map((source) => source.url),
};
seen.web_text = final.output_text;
seen.web_annotations = final.output[1].content[0].annotations;
const plain = await client.responses.create({ model: "fake-model", input: "What does gold cost?", tools: web });
seen.plain_action = plain.output[0].action;

// 2. local_shell: the model's call comes back for the client to run; its output continues.
const first = await client.responses.create({
  model: "fake-model",
  input: "List the files here.",
  tools: [{ type: "local_shell" }],
});
const shell = first.output[0];
seen.shell_item = {
  type: shell.type,
  call_id: shell.call_id,
  command: shell.action.command,
  working_directory: shell.action.working_directory,
  status: shell.status,
};
const second = await client.responses.create({
  model: "fake-model",
  previous_response_id: first.id,
  tools: [{ type: "local_shell" }],
  input: [{ type: "local_shell_call_output", id: shell.call_id, output: "notes.txt\n" }],
});
seen.shell_answer = second.output_text;

// 3. An artifact the model made is a part of the answer.
const made = await client.responses.create({ model: "fake-model", input: "Write a Fibonacci function." });
seen.artifact_parts = made.output[made.output.length - 1].content;

// 4. Chat Completions: the artifact beside the message's content, and in the streamed event.
const completion = await client.chat.completions.create({
  model: "fake-model",
  messages: [{ role: "user", content: "Write a Fibonacci function again." }],
});
seen.completion_artifacts = completion.choices[0].message.x_artifacts ?? null;
const streamed = await client.chat.completions.create({
  model: "fake-model",
  messages: [{ role: "user", content: "And once more, streamed." }],
  stream: true,
});
let created = null;
for await (const chunk of streamed) {
  if (chunk.type === "x_artifact.created") created = chunk;
}
seen.streamed_artifact = created?.artifact ?? null;

// 5. A web search streamed as a new user asks for one: OpenAI's tool alone (its preview name, then
// its newer one), `stream: true`, nothing of Colloquy's (no x_* field).
const searched = (item) => ({
  id: item.id,
  status: item.status,
  action_type: item.action?.type ?? null,
  query: item.action?.query ?? null,
});
async function newUserStream(type, question) {
  const kinds = [];
  const done = [];
  let completed = null;
  let text = null;
  const events = await client.responses.create({
    model: "fake-model",
    input: question,
    tools: [{ type }],
    stream: true,
  });
  for await (const event of events) {
    kinds.push(event.type);
    if (event.type === "response.output_item.done" && event.item.type === "web_search_call") {
      done.push(searched(event.item));
    }
    if (event.type === "response.completed") {
      const output = event.response.output;
      completed = output.filter((item) => item.type === "web_search_call").map(searched);
      text = output
        .filter((item) => item.type === "message")
        .flatMap((item) => item.content)
        .filter((part) => part.type === "output_text")
        .map((part) => part.text)
        .join("");
    }
  }
  return {
    kinds,
    x_kinds: kinds.filter((kind) => kind.startsWith("x_")),
    done_calls: done,
    completed_calls: completed,
    text,
  };
}
seen.new_user_preview = await newUserStream("web_search_preview", "What does silver cost?");
seen.new_user_web_search = await newUserStream("web_search", "What does platinum cost?");

console.log(JSON.stringify(seen));
