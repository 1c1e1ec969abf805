// The Responses API's code_interpreter through Colloquy with the official OpenAI Node client: a
// CSV uploaded with /v1/files, a streamed request whose (scripted) model runs pandas on it and
// saves a chart, the chart read back with containers.files.content, then a second request in
// the same container reading a variable the first set. Run by tests/api/code_interpreter.rs with
// COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON line of what it saw (the same keys as
// tests/python/code_interpreter.py).
import OpenAI, { toFile } from "openai";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const seen = {};

const csv = await client.files.create({
  file: await toFile(Buffer.from("name,score\nada,2\nbob,4\ncyd,9\n"), "scores.csv"),
  purpose: "user_data",
});

const stream = client.responses.stream({
  model: "fake-model",
  input: "What is the mean score? Plot the scores.",
  tools: [{ type: "code_interpreter", container: { type: "auto", file_ids: [csv.id] } }],
  include: ["code_interpreter_call.outputs"],
});
seen.kinds = [];
const deltas = [];
for await (const event of stream) {
  seen.kinds.push(event.type);
  if (event.type === "response.code_interpreter_call_code.delta") deltas.push(event.delta);
}
const final = await stream.finalResponse();
seen.code_from_deltas = deltas.join("");
seen.call = final.output.find((item) => item.type === "code_interpreter_call");
const message = final.output.find((item) => item.type === "message");
seen.text = final.output_text;
seen.annotations = message.content[0].annotations;

const chart = seen.annotations.find((a) => a.type === "container_file_citation" && a.filename === "chart.png");
const content = await client.containers.files.content.retrieve(chart.file_id, { container_id: chart.container_id });
const png = Buffer.from(await content.arrayBuffer());
seen.png_head = png.subarray(0, 8).toString("base64");
seen.png_bytes = png.length;
const listed = await client.containers.files.list(chart.container_id);
seen.files = listed.data.map((f) => f.path).sort();
seen.container = await client.containers.retrieve(chart.container_id);

const again = await client.responses.create({
  model: "fake-model",
  input: "And again?",
  tools: [{ type: "code_interpreter", container: chart.container_id }],
  include: ["code_interpreter_call.outputs"],
});
seen.second = again.output.find((item) => item.type === "code_interpreter_call");

const made = await client.containers.create({ name: "scratch" });
seen.made = made;
await client.containers.delete(made.id);

console.log(JSON.stringify(seen));
