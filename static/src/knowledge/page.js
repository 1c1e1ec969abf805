// The knowledge bases page (`/knowledge`, one opened at `/knowledge/{id}`): the reader's named
// document collections, which agents search with `search_knowledge` in every chat of theirs.
// A form creates one; the list links each with its document count; the one opened can be
// renamed or deleted (after a confirmation), and its documents are the documents sidebar's
// panel, shown inline over the knowledge base's own `…/documents` and tus `…/uploads`. Agents
// are given knowledge bases in a chat's settings (`attach.js`).
import { api } from "../api.js";
import { navigate } from "../router.js";
import { h } from "../ui/dom.js";
import { menuButton } from "../ui/header.js";
import { confirmDialog } from "../ui/dialog.js";
import { documentsPanel } from "../documents/panel.js";
import { documentCount, limitsLine } from "./format.js";

const pathOf = (kb) => `/knowledge/${encodeURIComponent(kb.id)}`;

export function knowledgeView({ kbId, onMenu }) {
  let bases = [];
  let destroyed = false;
  let documents = null;

  const name = h("input", { id: "kb-name", maxlength: 200, autocomplete: "off", required: true });
  const createButton = h("button", { type: "submit", class: "primary" }, "Create knowledge base");
  const form = h("form", { class: "kb-create", "aria-label": "Create a knowledge base" },
    h("div", { class: "field" }, h("label", { for: "kb-name" }, "Name"), name), createButton);
  const refusal = h("p", { class: "doc-refusal", role: "alert" });
  const list = h("ul", { class: "kb-list", "aria-label": "Your knowledge bases" });
  const empty = h("p", { class: "muted", hidden: true }, "No knowledge bases yet.");
  const limits = h("p", { class: "muted kb-limits" });
  const detail = h("section", { class: "kb-detail", "aria-labelledby": "kb-title" });
  const el = h("main", { class: "knowledge", "aria-labelledby": "knowledge-heading" },
    h("header", { class: "chat-header" },
      menuButton(onMenu),
      h("h1", { id: "knowledge-heading", class: "chat-heading" }, "Knowledge bases")),
    h("div", { class: "knowledge-body" },
      h("section", { class: "kb-index", "aria-label": "All knowledge bases" },
        h("p", { class: "muted kb-intro" },
          "Named collections of documents, shared by every chat of the agents that search them (with search_knowledge). Give one to an agent in a chat's settings."),
        form, refusal, list, empty, limits),
      detail));
  document.title = "Knowledge bases · Colloquy";

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const wanted = name.value.trim();
    if (!wanted) return name.focus();
    refusal.textContent = "";
    createButton.disabled = true;
    try {
      const made = await api("POST", "/api/knowledge-bases", { name: wanted });
      name.value = "";
      navigate(pathOf(made));
    } catch (err) {
      refusal.textContent = `Not created: ${err.message}`;
    } finally {
      createButton.disabled = false;
    }
  });

  async function load() {
    try {
      const body = await api("GET", "/api/knowledge-bases");
      if (destroyed) return;
      bases = body.knowledge_bases ?? [];
      limits.textContent = limitsLine(body.limits);
      drawList();
      drawDetail();
    } catch (err) {
      if (destroyed) return;
      refusal.textContent = `Could not load the knowledge bases: ${err.message}`;
    }
  }

  function drawList() {
    list.replaceChildren(...bases.map((kb) => {
      const current = kb.id === kbId;
      return h("li", { class: current ? "current" : null },
        h("a", {
          href: pathOf(kb),
          class: "kb-link",
          "aria-current": current ? "page" : null,
          onclick: (event) => {
            if (event.metaKey || event.ctrlKey || event.shiftKey) return;
            event.preventDefault();
            navigate(pathOf(kb));
          },
        }, h("span", { class: "kb-name" }, kb.name), h("span", { class: "kb-count muted" }, documentCount(kb.document_count))));
    }));
    list.hidden = bases.length === 0;
    empty.hidden = bases.length > 0;
  }

  function drawDetail() {
    documents?.destroy();
    documents = null;
    const kb = bases.find((b) => b.id === kbId);
    if (!kbId) {
      detail.replaceChildren(h("h2", { id: "kb-title", class: "visually-hidden" }, "No knowledge base open"),
        h("p", { class: "muted kb-pick" }, bases.length ? "Open a knowledge base to see and add its documents." : "Create a knowledge base, then add documents to it."));
      return;
    }
    if (!kb) {
      detail.replaceChildren(h("h2", { id: "kb-title" }, "Not found"),
        h("p", { class: "muted" }, "This knowledge base does not exist, or is not yours."));
      return;
    }
    document.title = `${kb.name} · Knowledge bases · Colloquy`;
    const title = h("h2", { id: "kb-title" }, kb.name);
    const rename = h("button", { type: "button", "aria-label": `Rename ${kb.name}` }, "Rename");
    const remove = h("button", { type: "button", class: "danger", "aria-label": `Delete ${kb.name}` }, "Delete");
    const head = h("div", { class: "kb-head" }, title, rename, remove);
    const status = h("p", { class: "muted", role: "status" });
    documents = documentsPanel(null, {
      base: `/api/knowledge-bases/${encodeURIComponent(kb.id)}`,
      noun: "this knowledge base",
      inline: true,
      onListed: (docs) => {
        kb.document_count = docs.length;
        drawList();
      },
    });
    detail.replaceChildren(head, status,
      h("p", { class: "muted kb-ids" }, "Also the vector store ", h("code", null, kb.vector_store_id), " on the OpenAI API."),
      documents.el);
    rename.addEventListener("click", () => startRename(head, kb, status));
    remove.addEventListener("click", async () => {
      const sure = await confirmDialog({
        title: `Delete ${kb.name}?`,
        body: `“${kb.name}” and its ${documentCount(kb.document_count).toLowerCase()} will be deleted; agents that search it no longer will. This cannot be undone.`,
        confirm: "Delete",
        danger: true,
      });
      if (!sure) return;
      try {
        await api("DELETE", `/api/knowledge-bases/${encodeURIComponent(kb.id)}`);
        navigate("/knowledge", { replace: true });
      } catch (err) {
        status.textContent = `Could not delete it: ${err.message}`;
      }
    });
  }

  function startRename(head, kb, status) {
    const input = h("input", { value: kb.name, "aria-label": "New name", maxlength: 200 });
    const renameForm = h("form", { class: "rename kb-rename" }, input,
      h("button", { type: "submit", class: "primary" }, "Save"),
      h("button", { type: "button", onclick: () => drawDetail() }, "Cancel"));
    renameForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const wanted = input.value.trim();
      if (!wanted) return input.focus();
      try {
        const saved = await api("PATCH", `/api/knowledge-bases/${encodeURIComponent(kb.id)}`, { name: wanted });
        Object.assign(kb, saved);
        drawList();
        drawDetail();
      } catch (err) {
        status.textContent = `Not renamed: ${err.message}`;
      }
    });
    renameForm.addEventListener("keydown", (event) => {
      if (event.key === "Escape") drawDetail();
    });
    head.replaceWith(renameForm);
    input.focus();
    input.select();
  }

  load();
  return {
    el,
    destroy() {
      destroyed = true;
      documents?.destroy();
    },
  };
}
