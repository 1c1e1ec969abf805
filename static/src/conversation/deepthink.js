// The Deep Think panel of an answer: the plan's title, its sub-tasks in order with their state
// in words (waiting, running with its research steps, done, failed and why), the phase line
// (planning, researching, synthesizing) and, once the report is saved, a button opening it.
// It draws `run.deepThink` (run.js) and nothing else: no requests, no stream handling.
import { h } from "../ui/dom.js";

/// Research steps shown under a running sub-task: the latest few, so the panel stays short.
const SHOWN_STEPS = 3;

/// A sub-task's state in words (colour only repeats it).
export function subtaskState(task) {
  switch (task.state) {
    case "running":
      return "running";
    case "done":
      return task.sources ? `done, ${task.sources} source${task.sources === 1 ? "" : "s"}` : "done";
    case "failed":
      return task.error ? `failed: ${task.error}` : "failed";
    case "budget":
      return "stopped: out of budget";
    default:
      return "waiting";
  }
}

/// What the run is doing now, in words.
export function phaseLine(deep) {
  const total = deep.subtasks.length;
  const finished = deep.subtasks.filter((t) => t.state !== "waiting" && t.state !== "running").length;
  switch (deep.phase) {
    case "discovery":
      return deep.discovery ? deep.discovery.message || "Exploring the site…" : "Planning the research…";
    case "planning":
      return "Planning the research…";
    case "research":
      return `Researching: ${finished} of ${total} sub-task${total === 1 ? "" : "s"} finished…`;
    case "synthesizing":
      return "Synthesizing report…";
    case "done":
      return deep.artifactName ? `Report saved as ${deep.artifactName}.` : "Report written.";
    case "failed":
      return `Deep Think failed: ${deep.error ?? "unknown error"}`;
    default:
      return "";
  }
}

/// One line summing up a finished run: "3 sub-tasks: 2 done, 1 failed".
export function summaryLine(deep) {
  const count = (state) => deep.subtasks.filter((t) => t.state === state).length;
  const parts = [["done", "done"], ["failed", "failed"], ["budget", "out of budget"]]
    .filter(([state]) => count(state) > 0)
    .map(([state, words]) => `${count(state)} ${words}`);
  const total = deep.subtasks.length;
  return `${total} sub-task${total === 1 ? "" : "s"}${parts.length ? `: ${parts.join(", ")}` : ""}`;
}

function taskItem(task) {
  const steps = task.state === "running" ? task.events.slice(-SHOWN_STEPS) : [];
  return h("li", { class: `dt-task dt-${task.state}` },
    h("span", { class: "dt-query" }, task.query || `Sub-task ${task.id}`),
    " ",
    h("span", { class: "dt-state" }, `(${subtaskState(task)})`),
    steps.length > 0
      ? h("ul", { class: "dt-steps", "aria-label": "Research steps" }, steps.map((step) => h("li", null, step.label)))
      : null);
}

function body(deep) {
  return [
    deep.discovery?.done && deep.discovery.pagesFetched
      ? h("p", { class: "dt-note" }, `Read ${deep.discovery.pagesFetched} page${deep.discovery.pagesFetched === 1 ? "" : "s"} of the site first.`)
      : null,
    deep.subtasks.length > 0 ? h("ol", { class: "dt-tasks", "aria-label": "Sub-tasks" }, deep.subtasks.map(taskItem)) : null,
    deep.structured.length > 0
      ? h("ul", { class: "dt-structured", "aria-label": "Also made" },
        deep.structured.map((a) => h("li", null, `${a.type === "comparison_table" ? "Comparison table" : "Findings list"}: ${a.title ?? ""}`)))
      : null,
  ];
}

/// The panel of a live answer; `update(deep)` redraws it in place. The phase line keeps its
/// element, so a screen reader hears each phase once.
export function liveDeepThinkPanel({ onOpenReport }) {
  const heading = h("h2", { class: "dt-title" });
  const content = h("div", { class: "dt-body" });
  const phase = h("p", { class: "dt-phase", role: "status" });
  const report = h("div", { class: "dt-report" });
  const el = h("section", { class: "deep-think", "aria-label": "Deep Think" }, heading, content, phase, report);
  let shownReport = null;
  return {
    el,
    update(deep) {
      heading.textContent = deep.title ? `Deep Think: ${deep.title}` : "Deep Think";
      content.replaceChildren(...body(deep).filter(Boolean));
      const line = phaseLine(deep);
      if (phase.textContent !== line) phase.textContent = line;
      if (deep.artifactName && shownReport !== deep.artifactName) {
        shownReport = deep.artifactName;
        report.replaceChildren(h("button", { type: "button", class: "dt-open", onclick: () => onOpenReport(deep.artifactName) },
          `Open report (${deep.artifactName})`));
      }
    },
  };
}

/// The panel of a finished answer, folded: its summary names the plan and how it went. The
/// report opens from the answer's artifact list.
export function finishedDeepThinkPanel(deep) {
  return h("details", { class: "deep-think deep-think-done" },
    h("summary", null, `Deep Think${deep.title ? `: ${deep.title}` : ""} (${summaryLine(deep)})`),
    body(deep),
    deep.phase === "failed" ? h("p", { class: "dt-phase" }, phaseLine(deep)) : null);
}
