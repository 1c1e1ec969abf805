// An image round trip with the official OpenAI Node SDK, as a user's program would send one:
// Chat Completions with an `image_url` part in a stored chat, then the next turn in that chat
// (x_chat_id) with text only; the Responses API with an `input_image`, then a follow-up by
// previous_response_id. Run by tests/api/images.rs with COLLOQUY_URL and COLLOQUY_KEY set;
// prints one JSON line of what it saw and exits non-zero if the SDK rejected anything.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
// A 1×1 transparent PNG.
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==";

const first = await client.chat.completions.create({
  model: "fake-model",
  messages: [{
    role: "user",
    content: [
      { type: "text", text: "What is in this picture?" },
      { type: "image_url", image_url: { url: PIXEL } },
    ],
  }],
});
const chatId = first.x_chat_id;

// The next turn in the same chat, streamed: only the new question is sent.
const stream = await client.chat.completions.create({
  model: "fake-model",
  messages: [{ role: "user", content: "And what colour is it?" }],
  stream: true,
  x_chat_id: chatId,
});
let second = "";
for await (const chunk of stream) second += chunk.choices?.[0]?.delta?.content ?? "";

const response = await client.responses.create({
  model: "fake-model",
  input: [{
    role: "user",
    content: [
      { type: "input_text", text: "Describe this image." },
      { type: "input_image", image_url: PIXEL },
    ],
  }],
});
const followUp = await client.responses.create({
  model: "fake-model",
  previous_response_id: response.id,
  input: "Is it transparent?",
});

console.log(JSON.stringify({
  first: first.choices[0].message.content,
  chat_id: chatId,
  second,
  response: response.output_text,
  follow_up: followUp.output_text,
}));
