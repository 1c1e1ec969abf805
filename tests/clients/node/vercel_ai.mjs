// Drives Colloquy's /v1 with Vercel's AI SDK (`ai` with `@ai-sdk/openai-compatible`, what
// `useChat` apps use), as such an app would. Run by tests/api/openai_node.rs with COLLOQUY_URL
// and COLLOQUY_KEY set; prints one JSON line of what it saw.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";

// Colloquy's server-side tools are switched on per request with `web_search_options`, which
// this provider does not know: the app adds it to the body, as an app would with a fetch hook.
const withResearch = async (url, init) => {
  const body = JSON.parse(init.body);
  if (body.messages?.at(-1)?.content === "What is 2^10?") {
    body.web_search_options = { max_iterations: 3, x_tools: ["calculator"] };
  }
  return fetch(url, { ...init, body: JSON.stringify(body) });
};

const provider = createOpenAICompatible({
  name: "colloquy",
  baseURL: `${process.env.COLLOQUY_URL}/v1`,
  apiKey: process.env.COLLOQUY_KEY,
  includeUsage: true,
  fetch: withResearch,
});
const model = provider.chatModel("fake-model");

// streamText over a run with research events on the stream: they must not be error parts.
const streamed = streamText({ model, prompt: "What is 2^10?" });
const partTypes = [];
const errors = [];
for await (const part of streamed.fullStream) {
  partTypes.push(part.type);
  if (part.type === "error") errors.push(String(part.error?.message ?? part.error));
}
const usage = await streamed.usage;

// A tool round trip: the SDK runs the app's tool and sends its result back.
const ranWith = [];
const answered = await generateText({
  model,
  prompt: "Weather in Oslo?",
  tools: {
    get_weather: tool({
      description: "The weather in a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        ranWith.push(city);
        return { sky: "clear", city };
      },
    }),
  },
  stopWhen: stepCountIs(3),
});

console.log(JSON.stringify({
  text: await streamed.text,
  finish_reason: await streamed.finishReason,
  errors,
  part_types: [...new Set(partTypes)],
  total_tokens: usage.totalTokens ?? null,
  tool_ran_with: ranWith,
  tool_answer: answered.text,
}));
