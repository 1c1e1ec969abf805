// An answer's reasoning, folded above it: "Thinking…" and open while it streams, "Thought for
// N s" and folded once the answer starts (or the run ends); the same block, folded, from a
// stored message after a reload. A button with `aria-expanded` shows and hides the text, which
// is plain text (never parsed as HTML). It draws what run.js folded and nothing else.
import { h } from "../ui/dom.js";

let blocks = 0;

/// "Thought for 12 s": the seconds the model reasoned, at least 1 (it did think).
export function thoughtLabel(durationMs) {
  return `Thought for ${Math.max(1, Math.round((Number(durationMs) || 0) / 1000))} s`;
}

/// A reasoning block: `update({text, durationMs, streaming})` redraws it. It opens when the
/// reasoning starts streaming and folds when it stops; the reader's toggling in between stands.
export function reasoningBlock() {
  const id = `reasoning-${++blocks}`;
  // The arrow is drawn by CSS on a hidden span, so the button's name is its label alone.
  const label = h("span");
  const toggle = h("button", { type: "button", class: "reasoning-toggle", "aria-expanded": "false", "aria-controls": id },
    h("span", { class: "reasoning-arrow", "aria-hidden": "true" }), label);
  const body = h("div", { id, class: "reasoning-text", hidden: true });
  const el = h("section", { class: "reasoning", "aria-label": "Reasoning" }, toggle, body);
  const setOpen = (open) => {
    toggle.setAttribute("aria-expanded", String(open));
    body.hidden = !open;
  };
  toggle.addEventListener("click", () => setOpen(toggle.getAttribute("aria-expanded") !== "true"));
  let wasStreaming = false;
  function update({ text, durationMs, streaming }) {
    if (body.textContent !== text) body.textContent = text;
    label.textContent = streaming ? "Thinking…" : thoughtLabel(durationMs);
    el.classList.toggle("reasoning-live", streaming);
    if (streaming !== wasStreaming) setOpen(streaming);
    wasStreaming = streaming;
  }
  return { el, update };
}

/// A stored answer's reasoning (`{text, duration_ms}` from the messages API), folded.
export function storedReasoning(reasoning) {
  if (!reasoning?.text) return null;
  const block = reasoningBlock();
  block.update({ text: reasoning.text, durationMs: reasoning.duration_ms, streaming: false });
  return block.el;
}
