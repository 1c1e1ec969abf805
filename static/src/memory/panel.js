// The memory panel: the chat's memories (what `save_memory` keeps) with their category and
// date, a form to add one, and per memory edit and delete (with confirmation). The view tells
// it when a run's `save_memory` finished or a run ended (`noticeTools`, `refresh`), so a save
// by the model appears without a reload. It draws only its own panel.
import { api, chatPath, ApiError } from "../api.js";
import { h } from "../ui/dom.js";
import { confirmDialog } from "../ui/dialog.js";
import { CATEGORIES, categoryLabel, dateLine, newestFirst, newSaves, shortText } from "./format.js";

export function memoryPanel(chatId, { onToggle = () => {} } = {}) {
  let memories = [];
  let loaded = false;
  let stale = true;
  let destroyed = false;
  let generation = 0;
  let editing = null;
  const seenSaves = new Set();

  const button = h("button", { type: "button", class: "icon-text", "aria-expanded": "false", "aria-controls": "memory-panel" }, "Memory");
  const content = h("textarea", { id: "memory-new", rows: 2, required: true });
  const category = categorySelect("memory-new-category", "");
  const addButton = h("button", { type: "submit", class: "primary" }, "Add memory");
  const form = h("form", { class: "memory-form", "aria-label": "Add a memory" },
    h("div", { class: "field" }, h("label", { for: "memory-new" }, "New memory"), content),
    h("div", { class: "field inline" }, h("label", { for: "memory-new-category" }, "Category"), category, addButton));
  const status = h("p", { class: "muted memory-status", role: "status" });
  const list = h("ul", { class: "memory-list", "aria-label": "Saved memories" });
  const empty = h("p", { class: "muted", hidden: true }, "Nothing remembered yet. The assistant saves facts, preferences and instructions here, and so can you.");
  const closeButton = h("button", { type: "button", class: "icon", "aria-label": "Close memory" }, "×");
  const el = h("section", { id: "memory-panel", class: "side-panel memory-panel", "aria-labelledby": "memory-title", hidden: true },
    h("div", { class: "side-head" }, h("h2", { id: "memory-title" }, "Memory"), closeButton),
    form, status, list, empty);

  function categorySelect(id, value) {
    const select = h("select", { id },
      h("option", { value: "" }, "Decide from the wording"),
      CATEGORIES.map(([name, label]) => h("option", { value: name }, label)));
    select.value = value;
    return select;
  }

  const setOpen = (open) => {
    el.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    onToggle(open);
    if (open) {
      if (stale || !loaded) refresh();
      content.focus();
    }
  };
  button.addEventListener("click", () => setOpen(el.hidden));
  closeButton.addEventListener("click", () => {
    setOpen(false);
    button.focus();
  });
  el.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !document.querySelector("dialog[open]") && !editing) {
      setOpen(false);
      button.focus();
    }
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = content.value.trim();
    if (!text) {
      content.focus();
      return;
    }
    addButton.disabled = true;
    status.textContent = "Saving…";
    try {
      const body = { content: text };
      if (category.value) body.category = category.value;
      const saved = await api("POST", chatPath(chatId, "/memories"), body);
      content.value = "";
      category.value = "";
      status.textContent = saved?.status === "duplicate"
        ? `Already remembered: “${shortText(saved.memory?.content, 80)}”.`
        : "Memory added.";
      await refresh();
    } catch (err) {
      status.textContent = `Not added: ${err.message}`;
    } finally {
      addButton.disabled = false;
    }
  });

  async function refresh() {
    if (el.hidden) {
      // Asked again when the panel opens.
      stale = true;
      return;
    }
    const mine = ++generation;
    try {
      const body = await api("GET", chatPath(chatId, "/memories"));
      if (destroyed || mine !== generation) return;
      memories = newestFirst(body.memories ?? []);
      loaded = true;
      stale = false;
      draw();
    } catch (err) {
      if (destroyed || mine !== generation) return;
      if (err instanceof ApiError && err.status === 401) return;
      status.textContent = `Could not load the memories: ${err.message}`;
    }
  }

  function draw() {
    // A memory being edited keeps its form: a live save must not throw away what is typed.
    const rows = memories.map((memory) => (editing?.id === memory.id ? editing.row : memoryRow(memory)));
    list.replaceChildren(...rows);
    list.hidden = rows.length === 0;
    empty.hidden = !loaded || rows.length > 0;
  }

  function memoryRow(memory) {
    const name = shortText(memory.content);
    const edit = h("button", { type: "button", "aria-label": `Edit memory: ${name}` }, "Edit");
    const remove = h("button", { type: "button", "aria-label": `Delete memory: ${name}` }, "Delete");
    const row = h("li", { class: "memory" },
      h("p", { class: "memory-text" }, memory.content),
      h("div", { class: "memory-meta" },
        h("span", { class: `memory-category cat-${memory.category}` }, categoryLabel(memory.category)),
        h("span", { class: "muted" }, dateLine(memory)),
        h("span", { class: "memory-actions" }, edit, remove)));
    edit.addEventListener("click", () => startEdit(memory, row));
    remove.addEventListener("click", () => removeMemory(memory));
    return row;
  }

  function startEdit(memory, row) {
    const id = `memory-edit-${String(memory.id).replace(/[^A-Za-z0-9_-]/g, "")}`;
    const box = h("textarea", { id, rows: 3 });
    box.value = memory.content;
    const select = categorySelect(`${id}-category`, memory.category);
    const save = h("button", { type: "submit", class: "primary" }, "Save");
    const cancel = h("button", { type: "button" }, "Cancel");
    const editForm = h("form", { class: "memory-edit", "aria-label": "Edit memory" },
      h("div", { class: "field" }, h("label", { for: id }, "Memory text"), box),
      h("div", { class: "field inline" }, h("label", { for: `${id}-category` }, "Category"), select, cancel, save));
    const stop = () => {
      editing = null;
      draw();
      list.querySelector(`li:nth-child(${memories.findIndex((m) => m.id === memory.id) + 1}) button`)?.focus();
    };
    cancel.addEventListener("click", stop);
    box.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        stop();
      }
    });
    editForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = box.value.trim();
      if (!text) return box.focus();
      const change = {};
      if (text !== memory.content) change.content = text;
      if (select.value && select.value !== memory.category) change.category = select.value;
      if (Object.keys(change).length === 0) return stop();
      save.disabled = true;
      status.textContent = "Saving…";
      try {
        await api("PATCH", chatPath(chatId, `/memories/${encodeURIComponent(memory.id)}`), change);
        status.textContent = "Memory updated.";
        editing = null;
        await refresh();
      } catch (err) {
        status.textContent = `Not saved: ${err.message}`;
        save.disabled = false;
      }
    });
    const editRow = h("li", { class: "memory editing" }, editForm);
    editing = { id: memory.id, row: editRow };
    row.replaceWith(editRow);
    box.focus();
  }

  async function removeMemory(memory) {
    const sure = await confirmDialog({
      title: "Delete this memory?",
      body: `“${shortText(memory.content, 120)}” will be forgotten in this chat.`,
      confirm: "Delete",
      danger: true,
    });
    if (!sure) return;
    try {
      await api("DELETE", chatPath(chatId, `/memories/${encodeURIComponent(memory.id)}`));
      status.textContent = "Memory deleted.";
    } catch (err) {
      status.textContent = `Not deleted: ${err.message}`;
    }
    await refresh();
  }

  return {
    el,
    button,
    get open() {
      return !el.hidden;
    },
    hide: () => {
      if (!el.hidden) setOpen(false);
    },
    refresh,
    /// A run's tools changed: a finished `save_memory` means the list changed on the server.
    noticeTools(tools) {
      if (newSaves(tools, seenSaves).length > 0) refresh();
    },
    destroy() {
      destroyed = true;
    },
  };
}
