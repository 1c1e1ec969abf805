// One message of the active branch: a user's text and images (with Edit) or an answer rendered as
// Markdown (with Copy and Regenerate), its `‹ 2/3 ›` sibling switcher, the tool calls the
// answer made, its artifacts (each opens in a dialog), its ask_user cards, its Deep Think panel
// when this page saw the run, its reasoning (folded), and, when it ended early, why.
import { renderMarkdown } from "../markdown/render.js";
import { stopNote, trimmedNote } from "./run.js";
import { finishedDeepThinkPanel } from "./deepthink.js";
import { storedReasoning } from "./reasoning.js";
import { workflowSteps } from "./workflow.js";
import { openLabel } from "./artifactview.js";
import { h } from "../ui/dom.js";
import { icon } from "../ui/icons.js";
import { imageParts } from "./images.js";
import { browserPage, browserCard, headlinePage } from "./browser.js";
import { CODE_INTERPRETER, codeCard, codeOutput } from "./codeinterpreter.js";

/// Markdown rendered once per message content; a long chat re-renders nothing it has shown.
const rendered = new Map();

export function markdownOf(id, content) {
  const cached = rendered.get(id);
  if (cached && cached.content === content) return cached.el;
  const el = h("div", { class: "markdown" });
  renderMarkdown(content, el);
  rendered.set(id, { content, el });
  return el;
}

/// Keeps what a live answer already rendered as the stored message's rendering.
export function adoptRendering(id, content, el) {
  el.classList.add("markdown");
  rendered.set(id, { content, el });
}

export function siblingSwitcher(siblings, current, onSwitch) {
  if (siblings.length < 2) return null;
  const index = siblings.findIndex((s) => s.id === current.id);
  const go = (delta) => onSwitch(siblings[index + delta]);
  return h("div", { class: "siblings", role: "group", "aria-label": "Versions" },
    h("button", { type: "button", class: "icon", "aria-label": "Previous version", disabled: index <= 0, onclick: () => go(-1) }, "‹"),
    h("span", { class: "sibling-count", "aria-live": "polite" }, `${index + 1}/${siblings.length}`),
    h("button", { type: "button", class: "icon", "aria-label": "Next version", disabled: index >= siblings.length - 1, onclick: () => go(1) }, "›"));
}

/// The tool calls an answer's run recorded on the server (`/tree`'s `tools`), in the shape the
/// live run keeps them. A code_interpreter call's record carries its result (`content`), from
/// which its card is drawn.
export function storedTools(records) {
  if (!Array.isArray(records)) return null;
  return records.map((r) => ({
    id: r.id,
    name: r.name,
    arguments: r.arguments,
    status: r.success ? "done" : "failed",
    preview: r.preview ?? null,
    error: r.error ?? null,
    page: r.success ? browserPage(r.name, r.page ?? r.content) : null,
    interpreter: r.success && r.name === CODE_INTERPRETER ? codeOutput(r.content ?? null) : null,
  }));
}

/// The stored record, then what this page saw live that the record does not have yet (a run
/// that paused before a reload and resumed after it has both halves). A code_interpreter call
/// seen live keeps what the live run knew: its whole code and its figures.
export function mergeTools(stored, live) {
  if (!live || live.length === 0) return stored;
  if (!stored || stored.length === 0) return live;
  const seen = new Map(live.map((t) => [t.id, t]));
  const known = new Set(stored.map((t) => t.id));
  const kept = stored.map((t) => {
    const mine = t.name === CODE_INTERPRETER ? seen.get(t.id) : null;
    if (!mine) return t;
    return { ...t, arguments: mine.arguments ?? t.arguments, interpreter: mine.interpreter ?? t.interpreter };
  });
  return [...kept, ...live.filter((t) => !known.has(t.id))];
}

/// `figuresShown`: the answer shows the pictures its calls drew (its image parts), so a
/// code_interpreter card leaves them out. `open`: the list starts unfolded. The latest page a
/// browser call visited is shown above the folded list (browser.js), not inside it.
export function toolList(tools, { figuresShown = false, open = false } = {}) {
  if (!tools || tools.length === 0) return null;
  const failed = tools.filter((t) => t.status === "failed").length;
  const summary = `${tools.length} tool call${tools.length === 1 ? "" : "s"}${failed ? `, ${failed} failed` : ""}`;
  const headline = headlinePage(tools);
  const list = h("details", { class: "tools", open },
    h("summary", null, summary),
    h("ol", null, tools.map((tool) => {
      const args = typeof tool.arguments === "string" ? tool.arguments : JSON.stringify(tool.arguments ?? {});
      const state = { running: "running", done: "done", failed: "failed" }[tool.status] ?? "";
      // A code_interpreter call's card shows its code and output in place of the arguments
      // and the one-line preview.
      const card = codeCard(tool, h, { figures: !figuresShown });
      return h("li", { class: `tool tool-${state}` },
        h("div", { class: "tool-head" },
          h("span", { class: "tool-name" }, tool.name),
          h("span", { class: "tool-state" }, state)),
        card ? null : h("code", { class: "tool-args" }, args.length > 300 ? `${args.slice(0, 300)}…` : args),
        tool.error ? h("p", { class: "tool-error" }, `Error: ${typeof tool.error === "string" ? tool.error : tool.error.message ?? JSON.stringify(tool.error)}`) : null,
        tool.preview && !tool.error && !card ? h("pre", { class: "tool-preview" }, String(tool.preview).slice(0, 1000)) : null,
        card,
        tool.page === headline ? null : browserCard(tool.page, h));
    })));
  return headline ? h("div", { class: "tool-calls" }, browserCard(headline, h), list) : list;
}

/// The answer's artifacts; `onOpen(artifact)`, when given, adds a button opening each.
export function artifactList(artifacts, onOpen) {
  if (!artifacts || artifacts.length === 0) return null;
  return h("ul", { class: "artifacts", "aria-label": "Artifacts" },
    artifacts.map((a) => h("li", null, icon("artifact"), " ", h("strong", null, a.title || a.identifier),
      a.version ? ` (${a.identifier}, version ${a.version}) ` : ` (${a.identifier}) `,
      onOpen ? h("button", { type: "button", class: "action open-artifact", onclick: () => onOpen(a) }, openLabel(a)) : null)));
}

export function trimLine(trimmed) {
  const note = trimmed ? trimmedNote(trimmed) : "";
  return note ? h("p", { class: "trim-note", role: "note" }, note) : null;
}

export function stopLine(stopReason) {
  const note = stopNote(stopReason);
  return note ? h("p", { class: `stop-note stop-${stopReason}`, role: "note" }, note) : null;
}

function copyButton(text) {
  const button = h("button", { type: "button", class: "action" }, "Copy");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => (button.textContent = "Copy"), 1500);
  });
  return button;
}

/// A message's images as thumbnails, each opening the full image: a user's attachments, or the
/// pictures an answer made (`label` says which).
function thumbnails(node, imageUrl, label = "Attached image") {
  const parts = imageParts(node);
  if (parts.length === 0 || !imageUrl) return null;
  return h("div", { class: "message-images" }, parts.map((part, index) => {
    const src = imageUrl(part);
    const alt = `${label} ${index + 1} of ${parts.length}`;
    return h("a", { href: src, target: "_blank", rel: "noopener" }, h("img", { src, alt, loading: "lazy" }));
  }));
}

/// `ctx`: {siblings, busy, onSwitch, onEdit, onRegenerate, onOpenArtifact, imageUrl(part), tools,
/// cards, trimmed, workflows (the steps of the workflows its run ran), deepThink (the run's Deep Think state, when this page followed it),
/// readOnly (a shared link's page: no Edit, Regenerate or version switcher)}
export function messageView(node, ctx) {
  if (node.role === "user") {
    const body = node.content || imageParts(node).length === 0 ? h("div", { class: "user-text" }, node.content ?? "") : null;
    const edit = h("button", { type: "button", class: "action", disabled: ctx.busy }, "Edit");
    const el = h("article", { class: "message user", "aria-label": "You", dataset: { id: node.id } },
      thumbnails(node, ctx.imageUrl),
      body,
      ctx.readOnly ? null : h("div", { class: "message-actions" }, siblingSwitcher(ctx.siblings, node, ctx.onSwitch), edit));
    edit.addEventListener("click", () => ctx.onEdit(node, el));
    return el;
  }
  const parts = Array.isArray(node.parts) ? node.parts : [];
  const artifacts = parts.filter((p) => p.type === "artifact");
  const deep = ctx.deepThink;
  if (deep?.artifactName && !artifacts.some((a) => a.identifier === deep.artifactName)) {
    artifacts.push({ identifier: deep.artifactName, title: deep.title });
  }
  return h("article", { class: "message assistant", "aria-label": "Assistant", dataset: { id: node.id } },
    ctx.cards,
    deep ? finishedDeepThinkPanel(deep) : null,
    storedReasoning(node.reasoning),
    workflowSteps(ctx.workflows),
    toolList(ctx.tools, { figuresShown: imageParts(node).length > 0 }),
    markdownOf(node.id, node.content ?? ""),
    thumbnails(node, ctx.imageUrl, "Generated image"),
    artifactList(artifacts, ctx.onOpenArtifact),
    trimLine(ctx.trimmed),
    stopLine(node.stop_reason),
    node.model ? h("p", { class: "answer-model muted" }, `Answered by ${node.model}`) : null,
    node.error ? h("p", { class: "run-error" }, `Error: ${node.error}`) : null,
    h("div", { class: "message-actions" },
      ctx.readOnly ? null : siblingSwitcher(ctx.siblings, node, ctx.onSwitch),
      node.content ? copyButton(node.content) : null,
      ctx.readOnly ? null : h("button", { type: "button", class: "action", disabled: ctx.busy, onclick: () => ctx.onRegenerate(node) }, "Regenerate")));
}
