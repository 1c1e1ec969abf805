// The account page's default model: the model new chats start with (an agent's own model still
// comes first), chosen from what the model servers offer (`GET /chat/api/models`) and saved with
// the same REST as the picker's "Make default for new chats" (`PUT /chat/api/models/default`).
import { api } from "../api.js";
import { h } from "../ui/dom.js";

/// The select's value for "the server's default" (`model: null`).
const SERVER_DEFAULT = "";

/// The options: the server's default first, then every model (marked when its server is down).
export function modelOptions({ data, server_default: serverDefault }) {
  return [
    { value: SERVER_DEFAULT, label: `Server default (${serverDefault})` },
    ...data.map((m) => ({ value: m.id, label: m.available ? m.id : `${m.id} (server unavailable)` })),
  ];
}

/// The default model's field, part of the profile form (one form, one Save): `save()` sends it
/// when it changed since it was loaded, and answers the model new chats now start with (or
/// `null` when nothing was sent).
export function defaultModelField() {
  const select = h("select", { id: "default-model", "aria-describedby": "default-model-hint" });
  const hint = h("span", { class: "muted", id: "default-model-hint" }, "An agent's own model still comes first; a chat's model can be changed in its header.");
  let loaded = null;

  async function load() {
    try {
      const answer = await api("GET", "/chat/api/models");
      select.replaceChildren(...modelOptions(answer).map((o) => h("option", { value: o.value }, o.label)));
      const mine = answer.default === answer.server_default ? SERVER_DEFAULT : answer.default;
      select.value = [...select.options].some((o) => o.value === mine) ? mine : SERVER_DEFAULT;
      loaded = select.value;
    } catch (err) {
      hint.textContent = `Models could not be listed: ${err.message}`;
    }
  }

  async function save() {
    if (loaded === null || select.value === loaded) return null;
    const saved = await api("PUT", "/chat/api/models/default", { model: select.value || null });
    loaded = select.value;
    return saved.default;
  }

  load();
  return {
    el: h("div", { class: "field" }, h("label", { for: "default-model" }, "Default model for new chats"), select, hint),
    save,
  };
}
