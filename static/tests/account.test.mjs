import { test } from "node:test";
import assert from "node:assert/strict";
import { browserName } from "../src/settings/sessions.js";
import { sdkSnippets } from "../src/settings/keys.js";
import { agentBody, groupTools } from "../src/agents/form.js";
import { modelOptions } from "../src/settings/models.js";

test("a session's browser is named from its User-Agent", () => {
  const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";
  assert.equal(browserName(chrome), "Chrome on Linux");
  assert.equal(browserName("Mozilla/5.0 (Windows NT 10.0; rv:133.0) Gecko/20100101 Firefox/133.0"), "Firefox on Windows");
  assert.equal(browserName("curl/8.5.0"), "curl/8.5.0");
});

test("the SDK examples carry the base URL and the model", () => {
  const { python, node } = sdkSnippets("https://chat.example/v1", "qwen3");
  assert.match(python, /base_url="https:\/\/chat\.example\/v1"/);
  assert.match(python, /model="qwen3"/);
  assert.match(node, /baseURL: "https:\/\/chat\.example\/v1"/);
  assert.match(node, /apiKey: "YOUR_KEY"/);
});

test("an agent's save names its tools only when it chooses them", () => {
  const fields = { name: " Researcher ", instructions: "  ", model: "", toolsOn: true, chosen: ["web_search"], knowledgeBases: [] };
  assert.deepEqual(agentBody({ ...fields, onlyChosen: true }), {
    name: "Researcher", system_prompt: null, model: null, tools_enabled: true, enabled_tools: ["web_search"],
    chat_tools_enabled: true, knowledge_base_ids: [],
  });
  assert.equal(agentBody({ ...fields, onlyChosen: false }).enabled_tools, null);
  assert.equal(agentBody({ ...fields, onlyChosen: true, chatToolsKept: false }).chat_tools_enabled, false,
    "the chat's own tools turned off explicitly");
});

test("the tool catalog is grouped by origin, one group per MCP server", () => {
  const groups = groupTools([
    { name: "web_search", origin: "research" },
    { name: "create_artifact", origin: "chat" },
    { name: "execute_workflow", origin: "automation" },
    { name: "lookup", origin: "mcp", server_id: "crm" },
    { name: "files_read", origin: "mcp", server_id: "files" },
  ]);
  assert.deepEqual(groups.map((g) => g.label), ["Research tools", "Chat tools", "Workflow and schedule tools", "MCP tools (crm)", "MCP tools (files)"]);
  assert.deepEqual(groups[3].tools.map((t) => t.name), ["lookup"]);
});

test("the default-model choices start with the server's default and mark a server that is down", () => {
  const options = modelOptions({
    server_default: "alpha",
    data: [{ id: "alpha", available: true }, { id: "beta", available: false }],
  });
  assert.deepEqual(options, [
    { value: "", label: "Server default (alpha)" },
    { value: "alpha", label: "alpha" },
    { value: "beta", label: "beta (server unavailable)" },
  ]);
});
