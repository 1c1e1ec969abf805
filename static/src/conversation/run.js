// A run as the UI knows it, built from its SSE frames by one pure function (`applyFrame`),
// so a replay after a reload builds exactly what the live stream did. Frames carry the
// event's sequence number as `id`; a re-attach asks for what came after `lastSeq`.

export function newRun(runId = null) {
  return {
    runId,
    lastSeq: 0,
    userMessageId: null,
    assistantMessageId: null,
    text: "",
    tools: [],
    progress: null,
    asks: [],
    artifacts: [],
    research: null,
    trimmed: null,
    stopReason: null,
    error: null,
    usage: null,
    finished: false,
    done: false,
  };
}

/// What a research event says the run is doing, in words.
export function progressLabel(type, name, argumentsText) {
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

/// Applies one frame; returns the names of what changed ("text", "tools", "progress", "asks",
/// "artifacts", "finished", "error", "started") so the view redraws only those.
export function applyFrame(run, frame) {
  const seq = Number(frame.id);
  if (Number.isFinite(seq) && seq > run.lastSeq) run.lastSeq = seq;
  if (frame.data === "[DONE]") {
    run.done = true;
    return ["finished"];
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
      if (run.progress) {
        run.progress = null;
        return ["text", "progress"];
      }
      return ["text"];
    }
    return [];
  }
  switch (event.type) {
    case "run.started":
      run.runId = event.run_id;
      run.userMessageId = event.user_message_id ?? null;
      return ["started"];
    case "tool_call":
      if (!run.tools.some((t) => t.id === event.id)) {
        run.tools.push({ id: event.id, name: event.name, arguments: event.arguments, status: "running" });
      }
      return ["tools"];
    case "tool_result": {
      let tool = run.tools.find((t) => t.id === event.toolCallId);
      if (!tool) {
        tool = { id: event.toolCallId, name: event.name, arguments: null };
        run.tools.push(tool);
      }
      tool.status = event.success ? "done" : "failed";
      tool.preview = event.resultPreview ?? null;
      tool.error = event.error ?? null;
      return ["tools"];
    }
    case "x_research.searching":
    case "x_research.reading":
    case "x_research.code_searching":
    case "x_research.calculating":
    case "x_research.tool_call":
      run.progress = progressLabel(event.type, event.name, event.arguments);
      return ["progress"];
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
      run.stopReason = event.stop_reason;
      run.assistantMessageId = event.assistant_message_id ?? null;
      run.progress = null;
      return ["finished"];
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
};

/// The note shown under an answer that ended early, or null.
export function stopNote(stopReason) {
  if (!stopReason || stopReason === "completed" || stopReason === "paused") return null;
  return STOP_NOTES[stopReason] ?? `Stopped: ${stopReason.replaceAll("_", " ")}.`;
}
