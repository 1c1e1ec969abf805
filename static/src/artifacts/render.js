// One artifact version drawn by its type (kinds.js chooses): Markdown rendered and sanitised
// like an answer; code, plain text and pretty-printed JSON highlighted (highlight.js loaded
// when needed); HTML in an <iframe sandbox="allow-scripts"> whose document is the server's
// `/preview` (its own CSP makes it an opaque origin: no cookie, no same-origin access); SVG
// as an <img> of that preview, never in this page's DOM; a mermaid diagram drawn by the lazily
// loaded mermaid.js into an <img> (or, when it does not parse, its error and source).
// Nothing here inserts artifact content as HTML except through DOMPurify.
import { renderMarkdown } from "../markdown/render.js";
import { h } from "../ui/dom.js";
import { rendererFor, languageOf, prettyJson } from "./kinds.js";

/// Draws `artifact` ({title, identifier, type|mime_type, language, content}) into `target`.
/// `previewUrl`: the version's `/preview` path. Returns a function that frees what it made.
export function renderArtifact(target, artifact, previewUrl) {
  const name = artifact.title || artifact.identifier;
  const content = artifact.content ?? "";
  const kind = rendererFor(artifact.type ?? artifact.mime_type);
  switch (kind) {
    case "markdown": {
      const body = h("div", { class: "markdown" });
      renderMarkdown(content, body);
      target.replaceChildren(body);
      return () => {};
    }
    case "code":
      target.replaceChildren(codeBlock(content, languageOf(artifact), name));
      return () => {};
    case "json": {
      const pretty = prettyJson(content);
      target.replaceChildren(
        pretty.error ? h("p", { class: "artifact-warning", role: "note" }, pretty.error) : "",
        codeBlock(pretty.text, pretty.error ? "plaintext" : "json", name));
      return () => {};
    }
    case "html":
      target.replaceChildren(h("iframe", {
        class: "artifact-frame",
        sandbox: "allow-scripts",
        src: previewUrl,
        title: `${name} (HTML preview, sandboxed)`,
        referrerpolicy: "no-referrer",
      }));
      return () => {};
    case "svg":
      target.replaceChildren(h("img", { class: "artifact-image", src: previewUrl, alt: name }));
      return () => {};
    case "mermaid":
      return drawDiagram(target, content, name);
    default:
      target.replaceChildren(h("pre", { class: "artifact-text" }, content));
      return () => {};
  }
}

function codeBlock(text, language, name) {
  const code = h("code", { class: `language-${language}` }, text);
  const pre = h("pre", { class: "artifact-code", tabindex: "0", role: "region", "aria-label": `${name} (${language})` }, code);
  import("../markdown/highlight.js").then(({ highlight }) => highlight(code));
  return pre;
}

function drawDiagram(target, source, name) {
  let url = null;
  let cancelled = false;
  target.replaceChildren(h("p", { class: "muted", role: "status" }, "Drawing the diagram…"));
  import("./mermaid.js")
    .then(({ drawDiagram: draw }) => draw(source))
    .then((svg) => {
      if (cancelled) return;
      url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
      target.replaceChildren(h("img", { class: "artifact-image artifact-diagram", src: url, alt: `Diagram: ${name}` }));
    })
    .catch((err) => {
      if (cancelled) return;
      target.replaceChildren(
        h("p", { class: "run-error", role: "alert" }, `The diagram could not be drawn: ${errorText(err)}`),
        h("pre", { class: "artifact-code artifact-source", tabindex: "0", role: "region", "aria-label": `Source of ${name}` }, h("code", null, source)));
    });
  return () => {
    cancelled = true;
    if (url) URL.revokeObjectURL(url);
  };
}

function errorText(err) {
  const message = String(err?.message ?? err ?? "unknown error").trim();
  return message.length > 600 ? `${message.slice(0, 600)}…` : message;
}
