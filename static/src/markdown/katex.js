// Loaded only when a message has math. KaTeX builds DOM nodes and sets their styles through
// the CSSOM, which the Content-Security-Policy allows (style attributes in markup it forbids).
// Its stylesheet is a separate bundle named in index.html's <meta name="katex-css">.
import katex from "katex";

let styled = false;

function loadStyles() {
  if (styled) return;
  styled = true;
  const href = document.querySelector('meta[name="katex-css"]')?.content;
  if (href) document.head.append(Object.assign(document.createElement("link"), { rel: "stylesheet", href }));
}

export function typeset(span, tex, display) {
  loadStyles();
  try {
    katex.render(tex, span, { displayMode: display, throwOnError: false, output: "htmlAndMathml", maxSize: 50, maxExpand: 500 });
  } catch {
    span.textContent = display ? `$$${tex}$$` : `$${tex}$`;
  }
}
