import { test } from "node:test";
import assert from "node:assert/strict";
import { newRun, applyFrame, stopNote } from "../src/conversation/run.js";

const chunk = (content) => JSON.stringify({ object: "chat.completion.chunk", choices: [{ delta: { content } }] });

test("a run is built from its frames and remembers the last sequence number", () => {
  const run = newRun();
  applyFrame(run, { id: "1", data: JSON.stringify({ type: "run.started", run_id: "r1", user_message_id: "u1" }) });
  applyFrame(run, { id: "2", event: "message", data: JSON.stringify({ type: "tool_call", id: "c1", name: "calculator", arguments: { expression: "1/0" } }) });
  applyFrame(run, { id: "2", data: JSON.stringify({ type: "x_research.calculating", name: "calculator", arguments: "{\"expression\":\"1/0\"}" }) });
  assert.equal(run.progress, "Calculating 1/0…");
  applyFrame(run, { id: "3", event: "message", data: JSON.stringify({ type: "tool_result", toolCallId: "c1", name: "calculator", success: false, error: "division by zero" }) });
  applyFrame(run, { id: "4", data: chunk("Hel") });
  applyFrame(run, { id: "5", data: chunk("lo") });
  assert.equal(run.progress, null, "the answer replaces the progress line");
  applyFrame(run, { id: "6", data: JSON.stringify({ type: "run.finished", stop_reason: "max_iterations", assistant_message_id: "a1" }) });
  applyFrame(run, { id: "6", data: "[DONE]" });
  assert.equal(run.runId, "r1");
  assert.equal(run.text, "Hello");
  assert.equal(run.lastSeq, 6);
  assert.deepEqual(run.tools.map((t) => [t.name, t.status, t.error]), [["calculator", "failed", "division by zero"]]);
  assert.equal(run.stopReason, "max_iterations");
  assert.ok(run.done);
});

test("a tool without a research kind of its own is shown by its message", () => {
  const run = newRun();
  const call = { type: "x_research.tool_call", name: "save_memory", tool_name: "save_memory", arguments: "{}" };
  applyFrame(run, { id: "1", data: JSON.stringify({ ...call, message: "Saving a memory" }) });
  assert.equal(run.progress, "Saving a memory…");
  applyFrame(run, { id: "2", data: JSON.stringify(call) });
  assert.equal(run.progress, "Running save_memory…", "without a message, its name");
});

test("ask_user questions are tracked through answer and cancellation", () => {
  const run = newRun("r1");
  applyFrame(run, { id: "1", data: JSON.stringify({ type: "x_ask_user.question", question: "Which?", correlation_id: "ask_1" }) });
  assert.equal(run.asks[0].status, "pending");
  applyFrame(run, { id: "2", data: JSON.stringify({ type: "x_ask_user.cancelled", correlation_id: "ask_1" }) });
  assert.equal(run.asks[0].status, "cancelled");
});

test("runs that ended early say why; completed and paused ones say nothing", () => {
  assert.equal(stopNote("completed"), null);
  assert.equal(stopNote("paused"), null);
  assert.match(stopNote("max_iterations"), /iteration limit/);
  assert.match(stopNote("time_budget"), /time budget/);
  assert.match(stopNote("cancelled"), /stopped/);
});
