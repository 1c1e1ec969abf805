import { test } from "node:test";
import assert from "node:assert/strict";
import { stepLine, outcomeLine, firingTime } from "../src/automations/format.js";

test("a step is worded as its tool or its prompt, a long prompt shortened", () => {
  assert.equal(stepLine({ id: "sum", tool: "calculator", arguments: {} }), "sum: tool calculator");
  assert.equal(stepLine({ id: "say", prompt: "Explain it" }), "say: prompt “Explain it”");
  const long = stepLine({ id: "p", prompt: "x".repeat(500) });
  assert.ok(long.length < 140 && long.endsWith("…”"), long);
});

test("a firing's outcome names a failure's cause, and no firing says so", () => {
  assert.equal(outcomeLine(undefined), "not fired yet");
  const failed = outcomeLine({ status: "failed", due_at: "2026-01-01T00:00:00Z", error: "step bad failed" });
  assert.ok(failed.startsWith("failed at ") && failed.endsWith(": step bad failed"), failed);
  assert.ok(outcomeLine({ status: "succeeded", due_at: "2026-01-01T00:00:00Z" }).startsWith("succeeded at "));
  const skipped = outcomeLine({ status: "skipped", due_at: "2026-01-01T00:00:00Z", error: "its owner's account is disabled" });
  assert.ok(skipped.startsWith("skipped at ") && skipped.endsWith(": its owner's account is disabled"), skipped);
  assert.equal(firingTime(undefined), "none");
});
