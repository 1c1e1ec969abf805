// A run as the UI knows it, built from its SSE frames by one pure function (`applyFrame`),
// so a replay after a reload builds exactly what the live stream did. Frames carry the
// event's sequence number as `id`; a re-attach asks for what came after `lastSeq`. A Deep
// Think run also folds its phases and sub-tasks into `run.deepThink`; every step is safe to
// apply twice, and phases only move forward. A workflow's steps (`x_workflow.*`) fold into
// `run.workflows` (workflow.js). A code_interpreter call's output (`x_code_interpreter.output`)
// folds into its tool as `interpreter` (codeinterpreter.js).

import { browserPage } from "./browser.js";
import { CODE_INTERPRETER, codeOutput } from "./codeinterpreter.js";
import { applyWorkflow } from "./workflow.js";

export function newRun(runId = null) {
  return {
    runId,
    lastSeq: 0,
    userMessageId: null,
    assistantMessageId: null,
    text: "",
    // The model's reasoning (x_chat.reasoning), how long it has reasoned, and whether it is
    // reasoning now (its latest output was reasoning, not answer text).
    reasoning: "",
    reasoningMs: 0,
    reasoningActive: false,
    tools: [],
    progress: null,
    asks: [],
    artifacts: [],
    research: null,
    deepThink: null,
    // The workflows the run ran, each with its steps (workflow.js).
    workflows: null,
    trimmed: null,
    stopReason: null,
    error: null,
    usage: null,
    finished: false,
    done: false,
  };
}

/// What a research event says the run is doing, in words (an `x_research.tool_call`'s own
/// `message` when it has one: "Saving a memory").
export function progressLabel(type, name, argumentsText, message) {
  if (type === "x_research.tool_call" && message) return `${message}…`;
  let args = {};
  try {
    args = JSON.parse(argumentsText || "{}") ?? {};
  } catch {
    args = {};
  }
  const quoted = (value) => (value ? ` “${String(value).slice(0, 80)}”` : "");
  switch (type) {
    case "x_research.searching":
      return `Searching${quoted(args.query)}…`;
    case "x_research.reading":
      return `Reading ${args.url || (Array.isArray(args.urls) ? args.urls.join(", ") : "a page")}…`;
    case "x_research.code_searching":
      return `Searching code${quoted(args.query || args.repository)}…`;
    case "x_research.calculating":
      return `Calculating ${args.expression ?? ""}…`.replace(/ …$/, "…");
    default:
      return `Running ${name}…`;
  }
}

/// Applies one frame; returns the names of what changed ("text", "reasoning", "tools",
/// "progress", "asks", "artifacts", "deepThink", "workflow", "finished", "error", "started") so the view
/// redraws only those.
export function applyFrame(run, frame) {
  const seq = Number(frame.id);
  if (Number.isFinite(seq) && seq > run.lastSeq) run.lastSeq = seq;
  if (frame.data === "[DONE]") {
    run.done = true;
    run.reasoningActive = false;
    return ["finished", "reasoning"];
  }
  let event;
  try {
    event = JSON.parse(frame.data);
  } catch {
    return [];
  }
  if (event.object === "chat.completion.chunk") {
    const content = event.choices?.[0]?.delta?.content;
    if (content) {
      run.text += content;
      const changes = ["text"];
      if (run.reasoningActive) {
        run.reasoningActive = false;
        changes.push("reasoning");
      }
      if (run.progress) {
        run.progress = null;
        changes.push("progress");
      }
      return changes;
    }
    return [];
  }
  if (typeof event.type === "string" && event.type.startsWith("x_deep_think.")) {
    return applyDeepThink(run, event);
  }
  if (typeof event.type === "string" && event.type.startsWith("x_workflow.")) {
    return applyWorkflow(run, event);
  }
  switch (event.type) {
    case "x_chat.reasoning":
      run.reasoning += event.delta ?? "";
      run.reasoningMs = Number(event.elapsed_ms) || run.reasoningMs;
      run.reasoningActive = true;
      return ["reasoning"];
    case "run.started":
      run.runId = event.run_id;
      run.userMessageId = event.user_message_id ?? null;
      return ["started"];
    case "tool_call": {
      const known = run.tools.find((t) => t.id === event.id);
      if (!known) {
        run.tools.push({ id: event.id, name: event.name, arguments: event.arguments, status: "running" });
      } else {
        known.arguments ??= event.arguments;
      }
      // The model stopped reasoning to call a tool.
      const stopped = run.reasoningActive;
      run.reasoningActive = false;
      return stopped ? ["tools", "reasoning"] : ["tools"];
    }
    case "tool_result": {
      let tool = run.tools.find((t) => t.id === event.toolCallId);
      if (!tool) {
        tool = { id: event.toolCallId, name: event.name, arguments: null };
        run.tools.push(tool);
      }
      tool.status = event.success ? "done" : "failed";
      tool.preview = event.resultPreview ?? null;
      tool.error = event.error ?? null;
      tool.page = event.success ? browserPage(tool.name ?? event.name, event.result) : null;
      // The code interpreter's own event came first, with the figures: the result is the fallback.
      if ((tool.name ?? event.name) === CODE_INTERPRETER && event.success) tool.interpreter ??= codeOutput(event.result);
      return ["tools"];
    }
    case "x_code_interpreter.output": {
      // What a code_interpreter call printed, drew and wrote (codeinterpreter.js).
      let tool = run.tools.find((t) => t.id === event.call_id);
      if (!tool) {
        tool = { id: event.call_id, name: CODE_INTERPRETER, arguments: null, status: "running" };
        run.tools.push(tool);
      }
      tool.interpreter = codeOutput(event);
      return ["tools"];
    }
    case "x_research.searching":
    case "x_research.reading":
    case "x_research.code_searching":
    case "x_research.calculating":
    case "x_research.tool_call": {
      const label = progressLabel(event.type, event.name, event.arguments, event.message);
      // Research events name no sub-task: they belong to one only while it runs alone.
      const running = run.deepThink?.subtasks.filter((t) => t.state === "running") ?? [];
      if (running.length === 1) {
        const { events } = running[0];
        const key = Number.isFinite(seq) ? seq : null;
        if (!events.some((e) => e.label === label && (key === null ? e === events.at(-1) : e.seq === key))) {
          events.push({ seq: key, type: event.type, label });
        }
        return ["deepThink"];
      }
      run.progress = label;
      return ["progress"];
    }
    case "x_research.result":
      // The label stays until the next step starts or the answer does.
      return [];
    case "x_research.complete":
      run.research = event;
      run.progress = null;
      return ["progress"];
    case "x_artifact.created":
    case "x_artifact.updated": {
      const existing = run.artifacts.find((a) => a.identifier === event.identifier);
      if (existing) Object.assign(existing, event);
      else run.artifacts.push({ ...event });
      return ["artifacts"];
    }
    case "x_ask_user.question":
      if (!run.asks.some((a) => a.correlation_id === event.correlation_id)) {
        run.asks.push({ ...event, status: "pending", run_id: run.runId });
      }
      return ["asks"];
    case "x_ask_user.answered":
    case "x_ask_user.cancelled": {
      const ask = run.asks.find((a) => a.correlation_id === event.correlation_id);
      const status = event.type === "x_ask_user.answered" ? "answered" : "cancelled";
      if (ask) {
        ask.status = status;
        if ("answer" in event) ask.answer = event.answer;
      } else {
        run.asks.push({ correlation_id: event.correlation_id, status, answer: event.answer });
      }
      return ["asks"];
    }
    case "error":
      run.error = { message: event.error?.message ?? "The run failed.", code: event.error?.code ?? "run_error" };
      return ["error"];
    case "run.finished":
      run.finished = true;
      run.reasoningActive = false;
      run.stopReason = event.stop_reason;
      run.assistantMessageId = event.assistant_message_id ?? null;
      run.progress = null;
      return ["finished", "reasoning"];
    case "x_chat.metadata":
      run.usage = event.usage ?? null;
      return [];
    case "x_chat.context_trimmed":
      run.trimmed = event;
      return ["trimmed"];
    default:
      return [];
  }
}

/// A Deep Think run before its first event: "discovery" until the plan (or a site's discovery)
/// says more.
export function newDeepThink() {
  return { title: null, subtasks: [], phase: "discovery", discovery: null, synthesis: null, artifactName: null, error: null, structured: [] };
}

/// Phases in the order they happen; a replayed frame never moves a run back.
const PHASES = ["discovery", "planning", "research", "synthesizing", "done", "failed"];
const SUBTASK_STATES = { completed: "done", failed: "failed", budget_exhausted: "budget" };

function advance(deep, phase) {
  if (PHASES.indexOf(phase) > PHASES.indexOf(deep.phase)) deep.phase = phase;
}

function subtask(deep, id, fields = {}) {
  let task = deep.subtasks.find((t) => t.id === String(id));
  if (!task) {
    task = { id: String(id), query: "", index: deep.subtasks.length, state: "waiting", error: null, sources: null, tokens: null, events: [] };
    deep.subtasks.push(task);
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null && value !== "") task[key] = value;
  }
  return task;
}

/// Folds one `x_deep_think.*` event into `run.deepThink`.
function applyDeepThink(run, event) {
  run.deepThink ??= newDeepThink();
  const deep = run.deepThink;
  switch (event.type) {
    case "x_deep_think.discovery_started":
      deep.discovery = { ...deep.discovery, mode: event.mode ?? null, message: event.message ?? null, done: deep.discovery?.done ?? false };
      advance(deep, "discovery");
      break;
    case "x_deep_think.discovery_completed":
      deep.discovery = { ...deep.discovery, pagesFetched: event.pages_fetched ?? null, siteMap: event.site_map ?? null, message: event.message ?? deep.discovery?.message ?? null, done: true };
      advance(deep, "planning");
      break;
    case "x_deep_think.plan_created":
      deep.title = event.title ?? deep.title;
      for (const [index, planned] of (event.subtasks ?? []).entries()) {
        subtask(deep, planned.id ?? index + 1, { query: planned.query, index, tools: planned.tools });
      }
      advance(deep, "research");
      break;
    case "x_deep_think.subtask_started": {
      const task = subtask(deep, event.subtask_id, { query: event.subtask_query, index: event.subtask_index });
      if (task.state === "waiting") task.state = "running";
      advance(deep, "research");
      break;
    }
    case "x_deep_think.subtask_completed": {
      const task = subtask(deep, event.subtask_id, { index: event.subtask_index });
      task.state = SUBTASK_STATES[event.status] ?? "done";
      task.error = event.error ?? null;
      task.sources = event.sources ?? null;
      task.tokens = event.tokens ?? null;
      break;
    }
    case "x_deep_think.synthesizing":
      deep.synthesis = event.message ?? "Synthesizing final report...";
      advance(deep, "synthesizing");
      break;
    case "x_deep_think.artifact_created":
      if (!deep.structured.some((a) => a.type === event.artifact_type && a.title === event.artifact_title)) {
        deep.structured.push({ type: event.artifact_type, title: event.artifact_title, message: event.message ?? null });
      }
      break;
    case "x_deep_think.completed":
      deep.title = event.title ?? deep.title;
      deep.artifactName = event.artifact_name ?? deep.artifactName;
      advance(deep, "done");
      break;
    case "x_deep_think.error":
      deep.error = event.message ?? "Deep Think failed.";
      advance(deep, "failed");
      break;
    default:
      return [];
  }
  deep.subtasks.sort((a, b) => a.index - b.index);
  return ["deepThink"];
}

/// What `x_chat.context_trimmed` says, in words.
export function trimmedNote(trimmed) {
  const dropped = trimmed.dropped_messages ?? 0;
  const summarized = trimmed.summarized_messages ?? 0;
  const shortened = trimmed.shortened_results ?? 0;
  const parts = [];
  if (dropped > 0) {
    const oldest = `The ${dropped === 1 ? "oldest message" : `${dropped} oldest messages`} did not fit the model's context`;
    if (summarized >= dropped) parts.push(`${oldest}; the model was given a summary of ${dropped === 1 ? "it" : "them"} instead.`);
    else if (summarized > 0) parts.push(`${oldest}: ${summarized} of them were summarised, the rest left out.`);
    else parts.push(`${oldest} and ${dropped === 1 ? "was" : "were"} left out.`);
  }
  if (shortened > 0) parts.push(`${shortened} tool result${shortened === 1 ? " was" : "s were"} shortened to fit.`);
  if (trimmed.summary_error) parts.push(`(${trimmed.summary_error})`);
  return parts.join(" ");
}

const STOP_NOTES = {
  max_iterations: "Stopped at the tool-iteration limit; this is the best answer so far.",
  length: "The answer hit the model's length limit.",
  cancelled: "You stopped this answer.",
  time_budget: "Stopped: the run used up its time budget.",
  upstream_error: "The model server failed while answering.",
  interrupted: "Cut off when the server stopped; this is what had arrived.",
  loop_detected: "Stopped: the model kept repeating the same tool call.",
  workflow_failed: "The workflow stopped at a step that failed.",
};

/// The note shown under an answer that ended early, or null.
export function stopNote(stopReason) {
  if (!stopReason || stopReason === "completed" || stopReason === "paused") return null;
  return STOP_NOTES[stopReason] ?? `Stopped: ${stopReason.replaceAll("_", " ")}.`;
}
