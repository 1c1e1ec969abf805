// A workflow's steps in a run (a schedule's firing, a REST run, an `execute_workflow` call):
// `applyWorkflow` folds the `x_workflow.*` events into `run.workflows` (one entry per
// workflow, its steps in order), `storedWorkflows` reads the same shape from `/tree`'s
// `workflows` after a reload, and `workflowSteps` draws the compact list. A step's state only
// moves forward, so a frame applied twice changes nothing.
import { h } from "../ui/dom.js";

/// A step's states in the order they happen.
const STATES = ["waiting", "running", "succeeded", "failed", "not_run"];

function entry(run, event) {
  run.workflows ??= [];
  const id = event.workflow_id ?? event.workflowId ?? "workflow";
  let flow = run.workflows.find((w) => w.id === id);
  if (!flow) {
    flow = { id, name: null, version: null, status: "running", steps: [] };
    run.workflows.push(flow);
  }
  if (event.name) flow.name = event.name;
  if (event.version) flow.version = event.version;
  return flow;
}

function step(flow, id, index) {
  let found = flow.steps.find((s) => s.id === id);
  if (!found) {
    found = { id, index: index ?? flow.steps.length, kind: null, tool: null, status: "waiting", durationMs: null, preview: null, error: null };
    flow.steps.push(found);
    flow.steps.sort((a, b) => a.index - b.index);
  }
  return found;
}

function moveTo(found, status) {
  if (STATES.indexOf(status) > STATES.indexOf(found.status)) found.status = status;
}

/// Folds one `x_workflow.*` event into `run.workflows`; returns what changed.
export function applyWorkflow(run, event) {
  const flow = entry(run, event);
  switch (event.type) {
    case "x_workflow.started":
      for (const [index, id] of (event.steps ?? []).entries()) step(flow, String(id), index);
      break;
    case "x_workflow.step_started":
    case "x_workflow.step_completed":
    case "x_workflow.step_failed": {
      const found = step(flow, String(event.step_id), event.index);
      found.kind = event.kind ?? found.kind;
      found.tool = event.tool ?? found.tool;
      if (event.type === "x_workflow.step_started") {
        moveTo(found, "running");
        break;
      }
      moveTo(found, event.type === "x_workflow.step_completed" ? "succeeded" : "failed");
      found.durationMs = event.duration_ms ?? found.durationMs;
      found.preview = event.preview ?? found.preview;
      found.error = event.error ?? found.error;
      break;
    }
    case "x_workflow.finished":
      flow.status = event.status ?? "succeeded";
      for (const report of event.steps ?? []) {
        const found = step(flow, String(report.id));
        found.kind = report.kind ?? found.kind;
        found.tool = report.tool ?? found.tool;
        moveTo(found, report.status);
      }
      break;
    default:
      return [];
  }
  return ["workflow"];
}

/// `/tree`'s `workflows` records of an answer, in the shape the live run keeps (or null).
export function storedWorkflows(records) {
  if (!Array.isArray(records) || records.length === 0) return null;
  return records.filter((record) => Array.isArray(record?.steps)).map((record) => ({
    id: record.workflow_id,
    name: record.name ?? null,
    version: record.version ?? null,
    status: record.status ?? null,
    steps: record.steps.map((s, index) => ({
      id: s.id,
      index,
      kind: s.kind ?? null,
      tool: s.tool ?? null,
      status: s.status ?? "waiting",
      durationMs: s.duration_ms ?? null,
      preview: s.preview ?? null,
      error: s.error ?? null,
    })),
  }));
}

/// One step in words: "search: tool web_search — done in 120 ms", "say: prompt — running…".
export function workflowStepLine(s) {
  const what = s.tool ? `tool ${s.tool}` : s.kind ?? "step";
  const took = s.durationMs != null ? ` in ${s.durationMs} ms` : "";
  switch (s.status) {
    case "running":
      return `${s.id}: ${what} — running…`;
    case "succeeded":
      return `${s.id}: ${what} — done${took}`;
    case "failed":
      return `${s.id}: ${what} — failed${took}${s.error ? `: ${s.error}` : ""}`;
    case "not_run":
      return `${s.id}: ${what} — not run`;
    default:
      return `${s.id}: ${what} — waiting`;
  }
}

/// The list's accessible name: "Steps of the workflow Morning digest".
export function workflowLabel(flow) {
  return `Steps of the workflow ${flow.name ?? flow.id}`;
}

/// The workflows' step lists, or null when the run ran none.
export function workflowSteps(workflows) {
  if (!workflows || workflows.length === 0) return null;
  return h("div", { class: "workflow-runs" }, workflows.map((flow) => [
    h("p", { class: "muted workflow-title" }, `Workflow ${flow.name ?? flow.id}${flow.version ? `, version ${flow.version}` : ""}`),
    h("ol", { class: "workflow-steps", "aria-label": workflowLabel(flow) },
      flow.steps.map((s) => h("li", { class: `workflow-step step-${s.status}` },
        workflowStepLine(s),
        s.preview && s.status === "succeeded" ? h("span", { class: "muted step-preview" }, ` ${String(s.preview).slice(0, 120)}`) : null))),
  ]));
}
