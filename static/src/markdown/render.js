// Markdown to safe DOM: math is lifted out first (math.js), marked renders the rest, DOMPurify
// sanitises the HTML, then code blocks get a copy button and, when the message has them, the
// lazily loaded highlighter and KaTeX finish the job. `StreamingMarkdown` re-renders only the
// growing tail of a streaming answer: finished blocks are rendered once and kept.

import { Marked } from "marked";
import DOMPurify from "dompurify";
import { extractMath } from "./math.js";
import { stableLength } from "./blocks.js";
import { h } from "../ui/dom.js";

// Event-handler attributes (`onerror=…`) in a model's raw HTML. DOMPurify would remove them,
// but only after parsing them, and Chromium reports a CSP violation for a handler merely parsed
// in the sanitiser's inert document; taken out here, no handler reaches any parser.
const HANDLER_ATTRIBUTE = /[\s/]+on[a-z]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+)/gi;

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: { html: ({ text }) => text.replace(HANDLER_ATTRIBUTE, " ") },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe"],
  FORBID_ATTR: ["style"],
  ADD_ATTR: ["data-math", "target"],
};

/// Renders `source` into `target`, replacing what it held. `highlight: false` leaves code
/// plain (the streaming tail: it is highlighted once it settles).
export function renderMarkdown(source, target, { highlight = true } = {}) {
  const { text, maths } = extractMath(source);
  target.innerHTML = DOMPurify.sanitize(marked.parse(text), PURIFY);
  enhance(target, maths, highlight);
}

function enhance(root, maths, highlight) {
  const blocks = root.querySelectorAll("pre > code");
  for (const code of blocks) decorateCode(code);
  if (blocks.length > 0 && highlight) highlightLater(blocks);
  const spans = root.querySelectorAll("span[data-math]");
  if (spans.length > 0) typesetLater(spans, maths);
}

function decorateCode(code) {
  const pre = code.parentElement;
  const language = /language-([\w+-]+)/.exec(code.className)?.[1] ?? "";
  const copy = h("button", { type: "button", class: "copy", "aria-label": `Copy ${language || "code"}` }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(code.textContent);
      copy.textContent = "Copied";
    } catch {
      copy.textContent = "Copy failed";
    }
    setTimeout(() => (copy.textContent = "Copy"), 1500);
  });
  const bar = h("div", { class: "code-bar" }, h("span", { class: "code-lang" }, language || "text"), copy);
  pre.before(h("div", { class: "code-block" }));
  const wrapper = pre.previousElementSibling;
  wrapper.append(bar, pre);
}

function highlightLater(blocks) {
  import("./highlight.js").then(({ highlight }) => {
    for (const code of blocks) if (code.isConnected) highlight(code);
  });
}

function typesetLater(spans, maths) {
  import("./katex.js").then(({ typeset }) => {
    for (const span of spans) {
      const math = maths[Number(span.dataset.math)];
      if (math && span.isConnected) typeset(span, math.tex, math.display);
    }
  });
}

export class StreamingMarkdown {
  constructor(container) {
    this.container = container;
    this.done = h("div", { class: "md-done" });
    this.tail = h("div", { class: "md-tail" });
    container.replaceChildren(this.done, this.tail);
    this.committed = 0;
  }

  /// Shows `text` (the whole answer so far), rendering only what changed.
  update(text) {
    const stable = stableLength(text);
    if (stable > this.committed) {
      const block = h("div");
      renderMarkdown(text.slice(this.committed, stable), block);
      this.done.append(...block.childNodes);
      this.committed = stable;
    }
    renderMarkdown(text.slice(this.committed), this.tail, { highlight: false });
  }

  /// The answer is complete: the tail settles too (rendered once more, highlighted). The
  /// whole answer is not re-rendered: that would be one long task at the end of every reply.
  finish(text) {
    if (text.length > this.committed) {
      const block = h("div");
      renderMarkdown(text.slice(this.committed), block);
      this.done.append(...block.childNodes);
      this.committed = text.length;
    }
    this.tail.replaceChildren();
  }
}
