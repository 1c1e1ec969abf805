// Drives Colloquy's stateful Responses API with the official OpenAI Node SDK and with Vercel's AI
// SDK's default OpenAI provider (which speaks the Responses API), as programs would: the stream
// helper against a plain call, previous_response_id, a function-tool round trip, a conversation, a
// vector store behind file_search, and the spec's Node Responses example as written (only the base
// URL, key, model and vector store id substituted). Run by tests/api/responses_sdk.rs with
// COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON line of what it saw.
import OpenAI, { toFile } from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const seen = {};

// What differs between two runs of the same script.
const comparable = (response) => {
  const raw = structuredClone(response);
  // (`output_parsed` is the stream helper's own addition.)
  for (const key of ["id", "created_at", "x_chat_id", "x_metadata", "output_text", "output_parsed"]) delete raw[key];
  for (const item of raw.output) {
    delete item.id;
    for (const part of item.content ?? []) delete part.parsed;
  }
  return JSON.stringify(raw);
};

// 1. responses.stream() ends with the plain call's response (it threw "missing output at
// index 0" before output items were announced).
const plain = await client.responses.create({ model: "fake-model", input: "Say hello" });
const stream = client.responses.stream({ model: "fake-model", input: "Say hello" });
const deltas = [];
stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
const final = await stream.finalResponse();
seen.stream_equals_plain = comparable(final) === comparable(plain);
if (!seen.stream_equals_plain) seen.stream_diff = [comparable(final), comparable(plain)];
seen.stream_text = deltas.join("");

// 2. previous_response_id.
const first = await client.responses.create({ model: "fake-model", input: "My name is Ada." });
const second = await client.responses.create({
  model: "fake-model",
  input: "What is my name?",
  previous_response_id: first.id,
});
seen.second_text = second.output_text;

// 3. A function-tool round trip.
const weather = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};
const asked = await client.responses.create({ model: "fake-model", input: "Weather in Oslo?", tools: [weather] });
const call = asked.output.find((item) => item.type === "function_call");
seen.call = [call.name, JSON.parse(call.arguments)];
const answered = await client.responses.create({
  model: "fake-model",
  previous_response_id: asked.id,
  input: [{ type: "function_call_output", call_id: call.call_id, output: "rainy" }],
  tools: [weather],
});
seen.function_answer = answered.output_text;

// 4. A vector store, and the spec's Node Responses example.
const file = await client.files.create({
  file: await toFile(Buffer.from("# API design spec\n\nResources are nouns; versions live in the path.\n"), "spec.md"),
  purpose: "assistants",
});
const store = await client.vectorStores.create({ name: "Spec", file_ids: [file.id] });
for (let i = 0; i < 300; i++) {
  const files = await client.vectorStores.files.list(store.id);
  if (files.data.length && files.data.every((f) => f.status === "completed")) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const found = await client.vectorStores.search(store.id, { query: "resources nouns" });
seen.search = found.data.map((r) => r.filename);

const seedEvents = [];
const log = console.log;
console.log = (event) => seedEvents.push(event.type);
const stream000 = await client.responses.create({
model: "fake-model",
input: "Compare the uploaded design spec with current best practices for REST API design",
stream: true,
tools: [
{
type: "web_search_preview",
search_context_size: "medium",
x_tools: ["web_search", "fetch_url"],
},
{
type: "file_search",
vector_store_ids: [store.id],
},
],
});
for await (const event of stream000) {
console.log(event);
}
console.log = log;
seen.seed000_events = seedEvents;

// 5. A conversation.
const conversation = await client.conversations.create({
  items: [{ type: "message", role: "user", content: "Remember: the code word is kestrel." }],
});
const inConversation = await client.responses.create({
  model: "fake-model",
  input: "What is the code word?",
  conversation: conversation.id,
});
seen.conversation_text = inConversation.output_text;

// 6. Vercel's AI SDK with its default OpenAI provider: the Responses API.
const openai = createOpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const streamed = streamText({ model: openai("fake-model"), prompt: "Greet me" });
const errors = [];
for await (const part of streamed.fullStream) {
  if (part.type === "error") errors.push(String(part.error?.message ?? part.error));
}
seen.vercel_text = await streamed.text;
seen.vercel_errors = errors;
const ranWith = [];
const withTool = await generateText({
  model: openai("fake-model"),
  prompt: "Weather in Turku?",
  tools: {
    get_weather: tool({
      description: "The weather in a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        ranWith.push(city);
        return { sky: "overcast", city };
      },
    }),
  },
  stopWhen: stepCountIs(3),
});
seen.vercel_tool_ran_with = ranWith;
seen.vercel_tool_answer = withTool.text;

console.log(JSON.stringify(seen));
