import { test } from "node:test";
import assert from "node:assert/strict";
import { newRun, applyFrame } from "../src/conversation/run.js";
import { thoughtLabel } from "../src/conversation/reasoning.js";

const chunk = (content) => JSON.stringify({ object: "chat.completion.chunk", choices: [{ delta: { content } }] });
const thought = (delta, ms) => JSON.stringify({ type: "x_chat.reasoning", delta, elapsed_ms: ms });

test("reasoning folds into its own field, active until the answer starts", () => {
  const run = newRun("r1");
  assert.deepEqual(applyFrame(run, { id: "1", data: thought("Let me ", 400) }), ["reasoning"]);
  applyFrame(run, { id: "2", data: thought("think.", 1_600) });
  assert.equal(run.reasoning, "Let me think.");
  assert.equal(run.reasoningMs, 1_600);
  assert.ok(run.reasoningActive);
  assert.equal(run.text, "", "reasoning is never answer text");
  assert.deepEqual(applyFrame(run, { id: "3", data: chunk("Hi") }), ["text", "reasoning"]);
  assert.equal(run.reasoningActive, false);
  assert.equal(run.text, "Hi");
  assert.deepEqual(applyFrame(run, { id: "4", data: chunk("!") }), ["text"]);
});

test("a replay from the start builds the same reasoning as the live stream", () => {
  const frames = [
    { id: "1", data: JSON.stringify({ type: "run.started", run_id: "r1" }) },
    { id: "2", data: thought("a", 100) },
    { id: "3", event: "message", data: JSON.stringify({ type: "tool_call", id: "c1", name: "calculator", arguments: {} }) },
    { id: "4", data: thought("b", 900) },
    { id: "5", data: chunk("answer") },
    { id: "6", data: JSON.stringify({ type: "run.finished", stop_reason: "completed" }) },
  ];
  const live = newRun();
  for (const frame of frames) applyFrame(live, frame);
  const replayed = newRun();
  for (const frame of frames) applyFrame(replayed, frame);
  assert.deepEqual(replayed, live);
  assert.equal(live.reasoning, "ab");
  assert.equal(live.reasoningMs, 900);
  assert.equal(live.reasoningActive, false);
});

test("a tool call or the run's end stops the reasoning", () => {
  const run = newRun("r1");
  applyFrame(run, { id: "1", data: thought("hmm", 10) });
  assert.deepEqual(applyFrame(run, { id: "2", event: "message", data: JSON.stringify({ type: "tool_call", id: "c", name: "x", arguments: {} }) }), ["tools", "reasoning"]);
  applyFrame(run, { id: "3", data: thought("more", 20) });
  applyFrame(run, { id: "4", data: "[DONE]" });
  assert.equal(run.reasoningActive, false);
});

test("the label says how long the model thought, in whole seconds, at least one", () => {
  assert.equal(thoughtLabel(12_400), "Thought for 12 s");
  assert.equal(thoughtLabel(120), "Thought for 1 s");
  assert.equal(thoughtLabel(undefined), "Thought for 1 s");
});
