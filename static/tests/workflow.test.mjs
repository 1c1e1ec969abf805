import { test } from "node:test";
import assert from "node:assert/strict";
import { newRun, applyFrame } from "../src/conversation/run.js";
import { storedWorkflows, workflowStepLine, workflowLabel } from "../src/conversation/workflow.js";

let seq = 0;
const frame = (event) => ({ id: String(++seq), data: JSON.stringify(event) });
const wf = { workflow_id: "wf_1", version: 2 };

function firing() {
  seq = 0;
  return [
    frame({ type: "run.started", run_id: "r1" }),
    frame({ type: "x_workflow.started", ...wf, name: "Morning digest", steps: ["sum", "say", "check"] }),
    frame({ type: "x_workflow.step_started", ...wf, step_id: "sum", index: 0, kind: "tool", tool: "calculator" }),
    frame({ type: "x_workflow.step_completed", ...wf, step_id: "sum", index: 0, kind: "tool", tool: "calculator", duration_ms: 4, preview: "2" }),
    frame({ type: "x_workflow.step_started", ...wf, step_id: "say", index: 1, kind: "prompt", tool: null }),
    frame({ type: "x_workflow.step_failed", ...wf, step_id: "say", index: 1, kind: "prompt", tool: null, duration_ms: 30, error: "the model server failed" }),
    frame({ type: "x_workflow.finished", workflowId: "wf_1", version: 2, status: "failed", steps: [
      { id: "sum", kind: "tool", tool: "calculator", status: "succeeded", duration_ms: 4 },
      { id: "say", kind: "prompt", status: "failed", duration_ms: 30 },
      { id: "check", kind: "tool", tool: "calculator", status: "not_run", duration_ms: 0 },
    ] }),
  ];
}

test("a workflow's steps are listed in order as its events arrive, with their states in words", () => {
  const run = newRun();
  const frames = firing();
  assert.deepEqual(applyFrame(run, frames[0]), ["started"]);
  assert.deepEqual(applyFrame(run, frames[1]), ["workflow"]);
  assert.equal(workflowLabel(run.workflows[0]), "Steps of the workflow Morning digest");
  assert.deepEqual(run.workflows[0].steps.map(workflowStepLine), ["sum: step — waiting", "say: step — waiting", "check: step — waiting"]);
  applyFrame(run, frames[2]);
  assert.equal(workflowStepLine(run.workflows[0].steps[0]), "sum: tool calculator — running…");
  for (const f of frames.slice(3)) applyFrame(run, f);
  assert.equal(run.workflows.length, 1, "the finished event names the same workflow");
  assert.deepEqual(run.workflows[0].steps.map(workflowStepLine), [
    "sum: tool calculator — done in 4 ms",
    "say: prompt — failed in 30 ms: the model server failed",
    "check: tool calculator — not run",
  ]);
  assert.equal(run.workflows[0].status, "failed");
});

test("replaying a workflow's frames twice changes nothing, and a step never moves back", () => {
  const once = newRun();
  const frames = firing();
  for (const f of frames) applyFrame(once, f);
  const twice = newRun();
  for (const f of [...frames, ...frames]) applyFrame(twice, f);
  assert.deepEqual(twice.workflows, once.workflows);
  // A late "started" for a finished step leaves it finished.
  applyFrame(twice, frames[2]);
  assert.equal(twice.workflows[0].steps[0].status, "succeeded");
});

test("steps run by execute_workflow inside a model's run are listed without a started event", () => {
  const run = newRun();
  seq = 0;
  applyFrame(run, frame({ type: "x_workflow.step_started", ...wf, step_id: "a", index: 0, kind: "tool", tool: "web_search" }));
  assert.deepEqual(run.workflows[0].steps.map(workflowStepLine), ["a: tool web_search — running…"]);
  assert.equal(workflowLabel(run.workflows[0]), "Steps of the workflow wf_1");
});

test("a reloaded chat reads the same steps from the tree's record", () => {
  const live = newRun();
  for (const f of firing()) applyFrame(live, f);
  const stored = storedWorkflows([{ workflow_id: "wf_1", name: "Morning digest", version: 2, status: "failed", steps: [
    { id: "sum", kind: "tool", tool: "calculator", status: "succeeded", duration_ms: 4, preview: "2" },
    { id: "say", kind: "prompt", status: "failed", duration_ms: 30, error: "the model server failed" },
    { id: "check", kind: "tool", tool: "calculator", status: "not_run", duration_ms: 0 },
  ] }]);
  assert.deepEqual(stored[0].steps.slice(0, 2).map(workflowStepLine), live.workflows[0].steps.slice(0, 2).map(workflowStepLine));
  assert.equal(workflowLabel(stored[0]), workflowLabel(live.workflows[0]));
  assert.equal(storedWorkflows(undefined), null);
  assert.equal(storedWorkflows([]), null);
});
