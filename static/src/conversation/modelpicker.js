// The model picker in the chat header: a button naming the chat's model opens a list of every
// model the server's model servers offer (`GET /chat/api/models`), searchable, each marked
// when its server is down. Choosing one PATCHes the chat (`model`), so its next turn asks for
// it, and the choice is remembered by the server; before a chat exists, the choice is kept
// for its creation. "Make default" sets the model new chats start with.
import { api } from "../api.js";
import { h } from "../ui/dom.js";

/// Past this many models, the list opens with a search field.
const SEARCH_FROM = 8;

/// The models the model servers offer (`data`: `{id, available}` each, a down server's marked
/// unavailable) and the reader's default: what the picker lists, and the agent form too.
export const listModels = () => api("GET", "/chat/api/models");

/// How a model is named in a list: a down server's model says so.
export const modelLabel = (model) => (model.available ? model.id : `${model.id} (server unavailable)`);

/// `chatId`: the chat, or null for a new one; `onChange(model)` when a new chat's choice is
/// made (it is sent when the chat is created).
export function modelPicker(chatId, { onChange } = {}) {
  let models = [];
  let current = null;
  let userDefault = null;
  let active = -1;

  const label = h("span", { class: "model-name" }, "Model");
  const button = h("button", {
    type: "button",
    class: "icon-text model-button",
    "aria-haspopup": "listbox",
    "aria-expanded": "false",
    "aria-controls": `model-list-${chatId ?? "new"}`,
  }, label);
  const search = h("input", { type: "search", class: "model-search", "aria-label": "Search models", autocomplete: "off" });
  const list = h("ul", { id: `model-list-${chatId ?? "new"}`, role: "listbox", class: "model-list", "aria-label": "Models" });
  const status = h("p", { class: "model-status muted", role: "status" });
  const makeDefault = h("button", { type: "button", class: "action" }, "Make default for new chats");
  const popover = h("div", { class: "model-popover", hidden: true }, search, list, status, makeDefault);
  const el = h("div", { class: "model-picker" }, button, popover);

  const named = (model) => `Model: ${model ?? "server default"}`;
  function drawButton() {
    label.textContent = current ?? "Model";
    button.setAttribute("aria-label", named(current));
    const entry = models.find((m) => m.id === current);
    button.classList.toggle("unavailable", Boolean(entry && !entry.available));
  }

  function shown() {
    const query = search.value.trim().toLowerCase();
    return models.filter((m) => m.id.toLowerCase().includes(query));
  }

  function drawList() {
    const items = shown();
    active = Math.min(Math.max(active, 0), items.length - 1);
    list.replaceChildren(...items.map((model, index) => {
      const li = h("li", {
        role: "option",
        id: `model-option-${chatId ?? "new"}-${index}`,
        class: index === active ? "active" : null,
        "aria-selected": String(model.id === current),
        "aria-disabled": model.available ? null : "true",
        onclick: () => choose(model),
      }, h("span", { class: "model-id" }, model.id),
      model.available ? null : h("span", { class: "model-down" }, " (server unavailable)"),
      model.id === userDefault ? h("span", { class: "muted model-default" }, " (default)") : null);
      return li;
    }));
    list.setAttribute("aria-activedescendant", items.length ? `model-option-${chatId ?? "new"}-${active}` : "");
    status.textContent = items.length === 0 ? "No model matches." : "";
  }

  async function load(chatModel) {
    try {
      const answer = await listModels();
      models = answer.data;
      userDefault = answer.default;
      current = chatModel ?? current ?? answer.default;
      search.hidden = models.length < SEARCH_FROM;
      drawButton();
      if (!popover.hidden) drawList();
    } catch (err) {
      status.textContent = `Models could not be listed: ${err.message}`;
    }
  }

  async function choose(model) {
    if (!model.available) {
      status.textContent = `${model.id}'s server is unavailable now.`;
      return;
    }
    if (chatId) {
      try {
        await api("PATCH", `/chat/api/chats/${encodeURIComponent(chatId)}`, { model: model.id });
      } catch (err) {
        status.textContent = `Not changed: ${err.message}`;
        return;
      }
    }
    current = model.id;
    onChange?.(model.id);
    drawButton();
    close(true);
  }

  function open() {
    popover.hidden = false;
    button.setAttribute("aria-expanded", "true");
    search.value = "";
    active = Math.max(0, shown().findIndex((m) => m.id === current));
    drawList();
    load();
    (search.hidden ? list : search).focus();
  }

  function close(focusButton) {
    popover.hidden = true;
    button.setAttribute("aria-expanded", "false");
    if (focusButton) button.focus();
  }

  list.tabIndex = 0;
  button.addEventListener("click", () => (popover.hidden ? open() : close(false)));
  search.addEventListener("input", () => {
    active = 0;
    drawList();
  });
  const keys = (event) => {
    const items = shown();
    if (event.key === "ArrowDown") active = Math.min(active + 1, items.length - 1);
    else if (event.key === "ArrowUp") active = Math.max(active - 1, 0);
    else if (event.key === "Enter" && items[active]) {
      event.preventDefault();
      choose(items[active]);
      return;
    } else if (event.key === "Escape") {
      event.preventDefault();
      close(true);
      return;
    } else return;
    event.preventDefault();
    drawList();
  };
  search.addEventListener("keydown", keys);
  list.addEventListener("keydown", keys);
  makeDefault.addEventListener("click", async () => {
    if (!current) return;
    try {
      const answer = await api("PUT", "/chat/api/models/default", { model: current });
      userDefault = answer.default;
      status.textContent = `New chats start with ${userDefault}.`;
      drawList();
    } catch (err) {
      status.textContent = `Not changed: ${err.message}`;
    }
  });
  const outside = (event) => {
    if (!popover.hidden && !el.contains(event.target)) close(false);
  };
  document.addEventListener("pointerdown", outside);

  return {
    el,
    /// Shows the chat's stored model (`null`: its default) and refreshes the list.
    show(chatModel) {
      load(chatModel ?? null);
    },
    /// The choice made before the chat exists.
    model: () => current,
    destroy() {
      document.removeEventListener("pointerdown", outside);
    },
  };
}
