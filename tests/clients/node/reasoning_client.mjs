// Reads Colloquy's reasoning with the official OpenAI Node SDK, as a program would — the
// `x_chat.reasoning` lines and their `reasoning_content` deltas in a stream, the stream helper,
// `message.reasoning_content` and `x_metadata.thinking` without streaming, the reasoning tokens,
// a follow-up turn in the same chat, the Responses API's reasoning item (created, and streamed
// through `responses.stream()`) — then with Vercel's AI SDK, whose openai-compatible provider
// reads `reasoning_content`. Run by tests/api/reasoning.rs with COLLOQUY_URL, COLLOQUY_KEY and
// ROUNDS set, against a fake upstream scripted for exactly these calls; prints one JSON line.
import OpenAI from "openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const messages = [{ role: "user", content: "Hi!" }];

// What differs between two responses to the same input.
const comparable = (response) => {
  const raw = structuredClone(response);
  for (const key of ["id", "created_at", "x_chat_id", "x_metadata", "output_text", "output_parsed"]) delete raw[key];
  for (const item of raw.output) {
    delete item.id;
    for (const part of item.content ?? []) delete part.parsed;
  }
  return JSON.stringify(raw);
};

async function oneRound() {
  const seen = {};

  // 1. A plain stream: content deltas never carry reasoning; the reasoning lines do, as their
  // own `delta` and as `reasoning_content` in their choice.
  const stream = await client.chat.completions.create({
    model: "fake-model", messages, stream: true, stream_options: { include_usage: true },
  });
  let content = "";
  let viaType = "";
  let viaChoice = "";
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.type === "x_chat.reasoning") viaType += chunk.delta;
    if (chunk.type === "x_chat.metadata") usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta?.content ?? "";
      viaChoice += choice.delta?.reasoning_content ?? "";
    }
  }
  seen.stream_content = content;
  seen.stream_reasoning = viaType;
  seen.stream_reasoning_content = viaChoice;
  seen.stream_reasoning_tokens = usage?.completion_tokens_details?.reasoning_tokens ?? null;

  // 2. The SDK's stream helper accumulates the same stream into the answer.
  const helper = client.chat.completions.stream({ model: "fake-model", messages });
  seen.helper_content = (await helper.finalChatCompletion()).choices[0].message.content;

  // 3. Without streaming.
  const answer = await client.chat.completions.create({ model: "fake-model", messages });
  const message = answer.choices[0].message;
  seen.content = message.content;
  seen.reasoning_content = message.reasoning_content ?? null;
  seen.thinking = answer.x_metadata?.thinking ?? null;
  seen.reasoning_tokens = answer.usage?.completion_tokens_details?.reasoning_tokens ?? null;

  // 4. The same chat goes on (the test checks what the model was sent).
  const follow = await client.chat.completions.create({
    model: "fake-model", messages: [{ role: "user", content: "And then?" }], x_chat_id: answer.x_chat_id,
  });
  seen.follow_up = follow.choices[0].message.content;

  // 5. The Responses API: a reasoning item before the message.
  const created = await client.responses.create({ model: "fake-model", input: "Hi!" });
  seen.response_types = created.output.map((item) => item.type);
  seen.response_summary = created.output[0].type === "reasoning" ? created.output[0].summary.map((part) => part.text) : null;
  seen.response_text = created.output_text;
  seen.response_reasoning_tokens = created.usage.output_tokens_details.reasoning_tokens;

  // 6. responses.stream(): the reasoning's lifecycle events, and the same final object.
  const streamed = client.responses.stream({ model: "fake-model", input: "Hi!" });
  const types = [];
  let deltas = "";
  streamed.on("event", (event) => {
    types.push(event.type);
    if (event.type === "response.reasoning_summary_text.delta") deltas += event.delta;
  });
  const final = await streamed.finalResponse();
  seen.stream_summary_deltas = deltas;
  seen.stream_event_types = types.filter((t) => t.includes("reasoning") || t === "response.output_item.added");
  seen.stream_equals_created = comparable(final) === comparable(created);
  if (!seen.stream_equals_created) seen.stream_diff = [comparable(final), comparable(created)];
  return seen;
}

const rounds = [];
for (let i = 0; i < Number(process.env.ROUNDS ?? 1); i++) rounds.push(await oneRound());

// Vercel's AI SDK: the openai-compatible provider reads DeepSeek's `reasoning_content` deltas
// as reasoning parts, and the text as text.
const provider = createOpenAICompatible({
  name: "colloquy",
  baseURL: `${process.env.COLLOQUY_URL}/v1`,
  apiKey: process.env.COLLOQUY_KEY,
});
const result = streamText({ model: provider.chatModel("fake-model"), prompt: "Hi!" });
const errors = [];
for await (const part of result.fullStream) {
  if (part.type === "error") errors.push(String(part.error?.message ?? part.error));
}
if (errors.length) throw new Error(`error parts: ${errors.join("; ")}`);
const vercel = { text: await result.text, reasoning: (await result.reasoningText) ?? null };

console.log(JSON.stringify({ rounds, vercel }));
