import { test } from "node:test";
import assert from "node:assert/strict";
import { settings } from "../src/store.js";

const base = { ...settings.defaults(), tools: ["web_search"], maxIterations: 3 };

test("with both switches off a send carries no tool fields", () => {
  assert.deepEqual(settings.request(base), {});
});

test("the Tools switch sends the chosen tools and the iteration limit", () => {
  assert.deepEqual(settings.request({ ...base, enableTools: true }), {
    enableTools: true,
    web_search_options: { x_tools: ["web_search"], max_iterations: 3 },
  });
});

test("Deep Think adds x_deep_think beside the chosen tools", () => {
  assert.deepEqual(settings.request({ ...base, enableTools: true, deepThink: true }), {
    enableTools: true,
    web_search_options: { x_tools: ["web_search"], max_iterations: 3, x_deep_think: true },
  });
});

test("Deep Think implies tools: with Tools off the server chooses them", () => {
  assert.deepEqual(settings.request({ ...base, deepThink: true }), {
    enableTools: true,
    web_search_options: { x_deep_think: true },
  });
});
