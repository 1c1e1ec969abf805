import { test } from "node:test";
import assert from "node:assert/strict";
import { agentLabel, agentOf, researchChoices } from "../src/conversation/agent.js";
import { settings } from "../src/store.js";

const defaultAgent = { id: "agent_u1", name: "Assistant", is_default: true, tools_enabled: true, enabled_tools: null };
const calculator = { id: "agent_c", name: "Calculator", is_default: false, tools_enabled: true, enabled_tools: ["calculator"] };
const silent = { id: "agent_s", name: "Silent", is_default: false, tools_enabled: false, enabled_tools: ["calculator"] };
const agents = [defaultAgent, calculator, silent];
const RESEARCH = [["web_search", "Web search"], ["calculator", "Calculator"]];

test("the default agent is marked in the select", () => {
  assert.equal(agentLabel(defaultAgent), "Assistant (default)");
  assert.equal(agentLabel(calculator), "Calculator");
});

test("a chat shows its own agent, else the default one", () => {
  assert.equal(agentOf(agents, "agent_c"), calculator);
  assert.equal(agentOf(agents, null), defaultAgent);
  assert.equal(agentOf(agents, "agent_deleted"), defaultAgent);
  assert.equal(agentOf([], null), null);
});

test("research tools the agent does not allow cannot be chosen", () => {
  assert.deepEqual(researchChoices(RESEARCH, ["calculator", "save_memory"]), [
    { name: "web_search", label: "Web search", allowed: false },
    { name: "calculator", label: "Calculator", allowed: true },
  ]);
  assert.deepEqual(researchChoices(RESEARCH, []).map((c) => c.allowed), [false, false]);
});

test("until the agent's tools are known every research tool can be chosen", () => {
  assert.deepEqual(researchChoices(RESEARCH, null).map((c) => c.allowed), [true, true]);
});

test("the Tools switch follows the agent until the reader sets it", () => {
  const untouched = settings.defaults();
  assert.equal(settings.toolsOn(untouched, defaultAgent), false);
  assert.equal(settings.toolsOn(untouched, calculator), true);
  assert.equal(settings.toolsOn(untouched, silent), false);
  assert.equal(settings.toolsOn({ ...untouched, enableTools: false }, calculator), false);
  assert.equal(settings.toolsOn({ ...untouched, enableTools: true }, defaultAgent), true);
});

test("an agent that names its tools uses them unless the switch is turned off", () => {
  const untouched = settings.defaults();
  assert.equal(settings.request(untouched, calculator).enableTools, true);
  assert.deepEqual(settings.request({ ...untouched, enableTools: false }, calculator), { enableTools: false });
});

test("the default agent's chat tools stay on with the switch off", () => {
  assert.deepEqual(settings.request({ ...settings.defaults(), enableTools: false }, defaultAgent), {});
  assert.deepEqual(settings.request(settings.defaults(), null), {});
});

test("a send asks only for the research tools the agent allows", () => {
  const chosen = { ...settings.defaults(), tools: ["web_search", "calculator"] };
  assert.deepEqual(settings.request(chosen, calculator).web_search_options.x_tools, ["calculator"]);
  assert.deepEqual(settings.request({ ...chosen, enableTools: true }, defaultAgent).web_search_options.x_tools, ["web_search", "calculator"]);
});
