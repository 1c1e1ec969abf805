// Loaded only when a message has a code block: highlight.js's core with the common languages.
import hljs from "highlight.js/lib/common";

export function highlight(code) {
  if (code.dataset.highlighted) return;
  const language = /language-([\w+-]+)/.exec(code.className)?.[1];
  if (language && !hljs.getLanguage(language)) return;
  hljs.highlightElement(code);
}
