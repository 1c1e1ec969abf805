// The page a read-only link opens (`/s/{token}`), signed in or not: the chat's title and its
// active branch, drawn by the conversation's own message renderer (read-only: no Edit,
// Regenerate or version switcher), with its images and its artifacts (opened in a dialog at
// the answer's version, drawn by artifacts/render.js). No composer, settings or chat list. It
// reads only `/shared/{token}/…`, without credentials: the token opens this chat and nothing else.
import { h } from "../ui/dom.js";
import { messageView } from "../conversation/message.js";
import { renderArtifact } from "../artifacts/render.js";
import { icon } from "../ui/icons.js";

/// Where the link's things are served.
export const sharedPath = (token, rest = "") => `/shared/${encodeURIComponent(token)}${rest}`;

/// The path of an artifact version the page shows (by id; by identifier for a part without one).
export function artifactPath(token, artifact, rest = "") {
  const key = artifact.artifact_id ?? artifact.identifier;
  return sharedPath(token, `/artifacts/${encodeURIComponent(key)}/versions/${encodeURIComponent(artifact.version)}${rest}`);
}

async function fetchJson(path) {
  const response = await fetch(path, { credentials: "omit", headers: { accept: "application/json" } });
  if (!response.ok) {
    const error = new Error(`HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

export function sharedView({ token }) {
  const title = h("h1", { class: "chat-heading", id: "shared-title" }, "Shared chat");
  const note = h("p", { class: "shared-note muted" }, "Read-only");
  const list = h("div", { class: "messages", role: "log", "aria-label": "Conversation", "aria-live": "off" });
  const status = h("p", { class: "shared-status muted", role: "status" }, "Loading the shared chat…");
  const scroller = h("div", { class: "scroller", tabindex: "0", role: "region", "aria-label": "Shared conversation" }, status, list);
  const header = h("header", { class: "chat-header shared-header" }, title, note);
  const el = h("main", { class: "conversation shared-page", "aria-labelledby": "shared-title" },
    header,
    h("div", { class: "conversation-body" }, h("div", { class: "conversation-thread" }, scroller)));

  async function load() {
    try {
      const chat = await fetchJson(sharedPath(token));
      title.textContent = chat.title;
      document.title = `${chat.title} · Shared · Colloquy`;
      status.remove();
      const ctx = {
        readOnly: true,
        onOpenArtifact: openArtifact,
        imageUrl: (part) => sharedPath(token, `/attachments/${encodeURIComponent(part.attachment_id)}`),
      };
      list.replaceChildren(...chat.messages.map((message) => messageView(message, ctx)));
      if (chat.messages.length === 0) list.append(h("p", { class: "muted" }, "This chat has no messages yet."));
    } catch (err) {
      const gone = err.status === 404;
      note.hidden = true;
      title.textContent = gone ? "Link not found" : "Shared chat";
      document.title = `${title.textContent} · Colloquy`;
      status.textContent = gone
        ? "This link does not exist, has expired, or was revoked by the chat's owner."
        : `The shared chat could not be loaded: ${err.message}`;
    }
  }

  /// The artifact at the answer's version, in a modal dialog; Escape or Close shuts it.
  async function openArtifact(artifact) {
    const opener = document.activeElement;
    const name = artifact.title || artifact.identifier;
    const body = h("div", { class: "artifact-pane" }, h("p", { class: "muted", role: "status" }, "Loading…"));
    const close = h("button", { type: "button", class: "artifacts-close" }, icon("close"), " Close");
    const dialog = h("dialog", { class: "shared-artifact", "aria-labelledby": "shared-artifact-title" },
      h("div", { class: "artifacts-head" },
        h("h2", { id: "shared-artifact-title" }, artifact.version ? `${name} (version ${artifact.version})` : name),
        close),
      body);
    let free = () => {};
    const shut = () => {
      free();
      dialog.close();
      dialog.remove();
      opener?.focus?.();
    };
    close.addEventListener("click", shut);
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      shut();
    });
    document.body.append(dialog);
    dialog.showModal();
    close.focus();
    try {
      const version = await fetchJson(artifactPath(token, artifact));
      if (dialog.isConnected) free = renderArtifact(body, version, artifactPath(token, artifact, "/preview"));
    } catch (err) {
      body.replaceChildren(h("p", { class: "run-error", role: "alert" }, `The artifact could not be loaded (${err.message}).`));
    }
  }

  load();
  return { el, destroy() {} };
}
