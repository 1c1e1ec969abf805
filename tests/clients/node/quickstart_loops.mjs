// OpenAI's quickstart loops, exactly as users copy them, against Colloquy with the official
// Node SDK: the Chat Completions loop that reads `chunk.choices[0].delta` on every chunk (a
// plain stream, one with server-side tools on, and one that ends in an error), and
// `responses.stream()` with server-side tools on, to `finalResponse()`. Run by
// tests/api/openai_node.rs with COLLOQUY_URL and COLLOQUY_KEY set; prints one JSON line.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const seen = {};

async function quickstart(question, extra = {}, into = []) {
  const stream = await client.chat.completions.create({
    model: "fake-model",
    messages: [{ role: "user", content: question }],
    stream: true,
    ...extra,
  });
  for await (const chunk of stream) {
    into.push(chunk.choices[0].delta.content || "");
  }
  return into;
}

seen.plain = (await quickstart("Say hello")).join("");
const tools = await quickstart("What is 2^10?", { web_search_options: { x_tools: ["calculator"] } });
seen.tools = tools.join("");
seen.tools_chunks = tools.length;

// A stream that breaks off: the text so far, then the SDK's error from the stream's error line.
const partial = [];
try {
  await quickstart("Tell me", {}, partial);
  seen.error = null;
} catch (error) {
  seen.error = error.constructor.name;
  seen.error_message = error.message;
}
seen.partial = partial.join("");

// responses.stream() with server-side tools on, to finalResponse().
const stream = client.responses.stream({
  model: "fake-model",
  input: "What is 6*7?",
  tools: [{ type: "web_search_preview", x_tools: ["calculator"] }],
});
const types = new Set();
stream.on("event", (event) => types.add(event.type));
const final = await stream.finalResponse();
seen.responses_event_types = [...types].sort();
seen.responses_text = final.output_text;
seen.responses_status = final.status;

console.log(JSON.stringify(seen));
