// One artifact in a modal <dialog>: its title, its content (Markdown rendered and sanitised
// like an answer, anything else as plain text) and a download link to the raw endpoint. The
// content comes with the stored message's part when there is one, else from the REST API.
// Focus moves in, Escape or Close shuts it, focus returns to the opener.
import { api, chatPath } from "../api.js";
import { renderMarkdown } from "../markdown/render.js";
import { h } from "../ui/dom.js";

/// Whether an artifact is the report a Deep Think run saved (`deep-think-….md`).
export const isReport = (artifact) => /^deep-think-/.test(artifact.identifier ?? "");

/// The label of the control that opens an artifact.
export function openLabel(artifact) {
  return isReport(artifact) ? `Open report (${artifact.identifier})` : `Open ${artifact.title || artifact.identifier}`;
}

/// `artifact`: {identifier, title?, content?, mime_type?}; `content` missing means fetch it.
export async function showArtifact(chatId, artifact) {
  const opener = document.activeElement;
  const key = encodeURIComponent(artifact.identifier);
  const content = h("div", { class: "artifact-content" }, h("p", { class: "muted" }, "Loading…"));
  const close = h("button", { type: "button" }, "Close");
  const title = h("h2", { id: "artifact-title" }, artifact.title || artifact.identifier);
  const dialog = h("dialog", { class: "artifact-view", "aria-labelledby": "artifact-title" },
    h("div", { class: "artifact-bar" },
      title,
      h("a", { href: chatPath(chatId, `/artifacts/${key}/raw`), download: artifact.identifier }, "Download"),
      close),
    content);
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    dialog.remove();
    opener?.focus?.();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();

  let full = artifact;
  if (typeof artifact.content !== "string") {
    try {
      full = await api("GET", chatPath(chatId, `/artifacts/${key}`));
    } catch (err) {
      content.replaceChildren(h("p", { class: "run-error", role: "alert" }, `Could not open the artifact: ${err.message}`));
      return;
    }
  }
  if (full.title) title.textContent = full.title;
  const mime = full.mime_type ?? full.type ?? "";
  if (mime === "text/markdown" || /\.md$/i.test(full.identifier ?? artifact.identifier)) {
    const rendered = h("div", { class: "markdown" });
    renderMarkdown(full.content ?? "", rendered);
    content.replaceChildren(rendered);
  } else {
    content.replaceChildren(h("pre", { class: "artifact-text" }, full.content ?? ""));
  }
}
