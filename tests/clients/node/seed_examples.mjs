// The specification's Node Chat Completions examples and its documents API example in Node.js
// (fetch), as written (docs/spec.md#examples): only the base URL, key, model, chat id, session
// token and document id are substituted (from the environment). Each example is one function; those
// named on the command line run in order.
import OpenAI from "openai";

const BASE_URL = `${process.env.COLLOQUY_URL}/v1`;
const API_KEY = process.env.COLLOQUY_KEY;
const MODEL = "fake-model";

async function all_tools_enabled() {
  const client = new OpenAI({
    baseURL: BASE_URL,
    apiKey: API_KEY,
  });
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [
      { role: "user", content: "Compare the async runtimes in Rust and explain the tradeoffs" }
    ],
    stream: true,
    web_search_options: {
      search_context_size: "high",
      max_iterations: 8,
      x_tools: [
        "web_search", "fetch_url", "code_search",
        "gitlab_code_search", "calculator"
      ],
    },
  });
  for await (const chunk of stream) {
    const content = chunk.choices?.[0]?.delta?.content;
    if (content) process.stdout.write(content);
  }
  console.log();
}

async function multi_tool_conversation_flow() {
  const client = new OpenAI({
    baseURL: BASE_URL,
    apiKey: API_KEY,
  });
  // The model may chain: web_search -> fetch_url -> calculator
  // all server-side in a single request
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [
      {
        role: "user",
        content: "What is the current price of gold per ounce, " +
          "and how much would 3.5 troy ounces cost in EUR " +
          "at today's exchange rate?",
      }
    ],
    stream: true,
    web_search_options: {
      search_context_size: "medium",
      max_iterations: 6,
      x_tools: ["web_search", "fetch_url", "calculator"],
    },
  });
  for await (const chunk of stream) {
    const raw = chunk;
    // Check for research progress events
    if (raw.type && raw.type.startsWith("x_research.")) {
      if (raw.type === "x_research.searching") {
        console.log(`[Searching] ${raw.arguments || ""}`);
      } else if (raw.type === "x_research.reading") {
        console.log(`[Reading] ${raw.arguments || ""}`);
      } else if (raw.type === "x_research.calculating") {
        console.log(`[Calculating] ${raw.arguments || ""}`);
      } else if (raw.type === "x_research.complete") {
        console.log(`[Research complete] ${raw.iterations || 0} iterations, ${raw.elapsed_ms || 0}ms`);
      }
      continue;
    }
    // Normal content chunks
    const content = chunk.choices?.[0]?.delta?.content;
    if (content) process.stdout.write(content);
  }
  console.log();
}

async function deep_think() {
  const client = new OpenAI({
    baseURL: BASE_URL,
    apiKey: API_KEY,
  });
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [
      { role: "user", content: "Comprehensive analysis of quantum computing advances in 2026" }
    ],
    stream: true,
    web_search_options: {
      search_context_size: "medium",
      x_deep_think: true,
      x_tools: ["web_search", "fetch_url", "code_search", "calculator"],
    },
  });
  for await (const chunk of stream) {
    const raw = chunk;
    // Check for deep think progress events
    if (raw.type && raw.type.startsWith("x_deep_think.")) {
      console.log(`[${raw.type}]`, JSON.stringify(raw, null, 2));
      continue;
    }
    // Normal content chunks
    const content = chunk.choices?.[0]?.delta?.content;
    if (content) process.stdout.write(content);
  }
  console.log();
}

async function artifact_creation_flow() {
  const client = new OpenAI({
    baseURL: BASE_URL,
    apiKey: API_KEY,
  });
  // In the chat context, create_artifact and update_artifact
  // are always available. The model will use them when appropriate.
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [
      {
        role: "user",
        content: "Create a Python script that implements a " +
          "binary search tree with insert, search, and " +
          "in-order traversal methods.",
      }
    ],
    stream: true,
  });
  for await (const chunk of stream) {
    const raw = chunk;
    // Check for artifact events
    if (raw.type) {
      if (raw.type === "x_artifact.created") {
        console.log(`\n[Artifact created] ${raw.identifier || ""} ` +
          `- ${raw.title || ""} (v${raw.version || 1})`);
      } else if (raw.type === "x_artifact.updated") {
        console.log(`\n[Artifact updated] ${raw.identifier || ""} ` +
          `(v${raw.version || ""})`);
      }
      continue;
    }
    const content = chunk.choices?.[0]?.delta?.content;
    if (content) process.stdout.write(content);
  }
  console.log();
}

async function document_management() {
  // The documents API example, Node.js (fetch).
  const base = `${process.env.COLLOQUY_URL}/chat/api`;
  const chatId = process.env.CHAT_ID;
  const headers = { "Cookie": `session=${process.env.SESSION}` };
  // List documents
  const docsRes = await fetch(`${base}/${chatId}/documents`, { headers });
  const docs = await docsRes.json();
  docs.documents.forEach(doc =>
    console.log(`${doc.filename} (${doc.status}) - ${doc.size} bytes`)
  );
  // Delete a document
  await fetch(`${base}/${chatId}/documents/${process.env.DOCUMENT_ID}`, {
    method: "DELETE",
    headers
  });
}

const examples = {
  all_tools_enabled,
  multi_tool_conversation_flow,
  deep_think,
  artifact_creation_flow,
  document_management,
};
for (const name of process.argv.slice(2)) {
  console.log(`== ${name}`);
  await examples[name]();
}
