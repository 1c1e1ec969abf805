// Drives Colloquy's /v1 with the official OpenAI Node SDK, as a user's program would. Run by
// tests/api/openai_node.rs with COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON line of what
// it saw and exits non-zero if the SDK rejected anything.
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });

// The stream helper parses every line as a chunk (it threw "chunk.choices is not iterable" on
// the typed x_* lines before they were chunks).
const runner = client.chat.completions.stream({
  model: "fake-model",
  messages: [{ role: "user", content: "What is 2^10?" }],
  stream_options: { include_usage: true },
  web_search_options: { max_iterations: 3, x_tools: ["calculator"] },
});
const types = [];
let usageChunks = 0;
runner.on("chunk", (chunk) => {
  if (chunk.type) types.push(chunk.type);
  if (chunk.usage) usageChunks += 1;
});
const final = await runner.finalChatCompletion();

// A plain stream read chunk by chunk.
const stream = await client.chat.completions.create({
  model: "fake-model",
  messages: [{ role: "user", content: "Say hello" }],
  stream: true,
});
let text = "";
const finishReasons = [];
for await (const chunk of stream) {
  for (const choice of chunk.choices) {
    text += choice.delta?.content ?? "";
    if (choice.finish_reason) finishReasons.push(choice.finish_reason);
  }
}

const embedded = await client.embeddings.create({ model: "any", input: "first text" });

// runTools: the SDK runs the client's own function when the model calls it, sends the result
// back, and returns the model's final answer.
const ranWith = [];
const toolRunner = client.chat.completions.runTools({
  model: "fake-model",
  messages: [{ role: "user", content: "Weather in Oslo?" }],
  tools: [{
    type: "function",
    function: {
      name: "get_weather",
      description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      parse: JSON.parse,
      function: async ({ city }) => {
        ranWith.push(city);
        return { sky: "clear", city };
      },
    },
  }],
});
const toolAnswer = await toolRunner.finalContent();

// parse(): a JSON schema from a zod type, and the answer validated with it.
const Colour = z.object({ name: z.string(), hex: z.string() });
const parsed = await client.chat.completions.parse({
  model: "fake-model",
  messages: [{ role: "user", content: "A colour" }],
  response_format: zodResponseFormat(Colour, "colour"),
});

console.log(JSON.stringify({
  helper_content: final.choices[0].message.content,
  helper_total_tokens: final.usage?.total_tokens ?? null,
  usage_chunks: usageChunks,
  types,
  text,
  finish_reasons: finishReasons,
  embedding_length: embedded.data[0].embedding.length,
  tool_ran_with: ranWith,
  tool_answer: toolAnswer,
  parsed: parsed.choices[0].message.parsed,
}));
