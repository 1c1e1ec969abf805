// The account page's default model: the model new chats start with (an agent's own model still
// comes first), chosen from what the model servers offer (`GET /chat/api/models`) and saved with
// the same REST as the picker's "Make default for new chats" (`PUT /chat/api/models/default`).
import { api } from "../api.js";
import { h } from "../ui/dom.js";
import { section } from "./section.js";

/// The select's value for "the server's default" (`model: null`).
const SERVER_DEFAULT = "";

/// The options: the server's default first, then every model (marked when its server is down).
export function modelOptions({ data, server_default: serverDefault }) {
  return [
    { value: SERVER_DEFAULT, label: `Server default (${serverDefault})` },
    ...data.map((m) => ({ value: m.id, label: m.available ? m.id : `${m.id} (server unavailable)` })),
  ];
}

export function defaultModelSection() {
  const select = h("select", { id: "default-model", "aria-describedby": "default-model-hint" });
  const button = h("button", { type: "submit", class: "primary" }, "Save default model");
  const status = h("p", { class: "muted", role: "status" });
  const form = h("form", { class: "account-form" },
    h("div", { class: "field" }, h("label", { for: "default-model" }, "Default model for new chats"), select,
      h("span", { class: "muted", id: "default-model-hint" }, "An agent's own model still comes first; a chat's model can be changed in its header.")),
    button, status);

  async function load() {
    try {
      const answer = await api("GET", "/chat/api/models");
      select.replaceChildren(...modelOptions(answer).map((o) => h("option", { value: o.value }, o.label)));
      const mine = answer.default === answer.server_default ? SERVER_DEFAULT : answer.default;
      select.value = [...select.options].some((o) => o.value === mine) ? mine : SERVER_DEFAULT;
    } catch (err) {
      status.textContent = `Models could not be listed: ${err.message}`;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    status.textContent = "Saving…";
    try {
      const saved = await api("PUT", "/chat/api/models/default", { model: select.value || null });
      status.textContent = `Saved: new chats start with ${saved.default}.`;
    } catch (err) {
      status.textContent = `Not saved: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  });
  load();
  return { el: section("default-model-heading", "Default model", form) };
}
