// `/v1/images/generations` and the Responses API's image_generation tool through Colloquy with the
// official OpenAI Node client: one image as JSON, a stream with partial images, then the tool's
// image_generation_call item and events. Run by tests/api/image_generation.rs with COLLOQUY_URL
// and COLLOQUY_KEY set, against a fake image server; prints one JSON line of what it saw (the same
// keys as tests/python/image_generation.py).
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.env.COLLOQUY_URL}/v1`, apiKey: process.env.COLLOQUY_KEY });
const seen = {};

const made = await client.images.generate({ prompt: "a lighthouse at dusk", size: "256x256" });
seen.b64 = made.data[0].b64_json;
seen.revised_prompt = made.data[0].revised_prompt;

const stream = await client.images.generate({
  prompt: "a lighthouse at dusk",
  size: "256x256",
  stream: true,
  partial_images: 2,
});
seen.stream = [];
for await (const event of stream) {
  seen.stream.push([event.type, event.partial_image_index ?? null, event.b64_json]);
}

const responses = client.responses.stream({
  model: "fake-model",
  input: "Paint me a lighthouse.",
  tools: [{ type: "image_generation", size: "256x256", partial_images: 2 }],
});
seen.responses_kinds = [];
seen.responses_partials = [];
for await (const event of responses) {
  seen.responses_kinds.push(event.type);
  if (event.type === "response.image_generation_call.partial_image") {
    seen.responses_partials.push([event.output_index, event.partial_image_index, event.partial_image_b64]);
  }
}
const final = await responses.finalResponse();
seen.responses_item = final.output[0];
seen.responses_text = final.output_text;

console.log(JSON.stringify(seen));
