// Loaded only when a diagram artifact is opened: mermaid, set up for untrusted input (strict
// security, no HTML labels, no error drawing of its own). A diagram becomes an SVG string the
// panel shows as an <img> from a blob: URL: mermaid's SVG carries a <style> element, which the
// page's CSP would refuse, and as an image it can run nothing. Mermaid lays the diagram out in
// a hidden element of this page first; the CSP refuses that element's inline styles (the
// browser logs each refusal), which changes nothing in the SVG it returns.
import mermaid from "mermaid";

let ready = false;
let counter = 0;

function setUp() {
  if (ready) return;
  ready = true;
  const dark = window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    suppressErrorRendering: true,
    htmlLabels: false,
    // Natural sizes: an <img> of an SVG whose width is "100%" would stretch to the panel.
    flowchart: { htmlLabels: false, useMaxWidth: false },
    sequence: { useMaxWidth: false },
    class: { useMaxWidth: false },
    state: { useMaxWidth: false },
    er: { useMaxWidth: false },
    gantt: { useMaxWidth: false },
    journey: { useMaxWidth: false },
    pie: { useMaxWidth: false },
    theme: dark ? "dark" : "default",
    fontFamily: "system-ui, sans-serif",
  });
}

/// The diagram `source` draws, as SVG markup; throws with mermaid's message when it does not
/// parse.
export async function drawDiagram(source) {
  setUp();
  await mermaid.parse(source);
  const { svg } = await mermaid.render(`artifact-diagram-${++counter}`, source);
  return svg;
}
