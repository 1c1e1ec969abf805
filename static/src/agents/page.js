// The agents page (`/agents`): the reader's agents — each a name, instructions, a model, its
// tools and knowledge bases — listed with Edit, Start a chat and Delete (after a confirmation;
// the default agent cannot be deleted), and the editor (`form.js`) for a new or an existing
// one. Starting a chat picks the agent for the next new chat (as the chat settings' agent
// field does) and opens it.
import { api } from "../api.js";
import { navigate } from "../router.js";
import { settings } from "../store.js";
import { h } from "../ui/dom.js";
import { confirmDialog } from "../ui/dialog.js";
import { menuButton } from "../ui/header.js";
import { listModels } from "../conversation/modelpicker.js";
import { agentForm } from "./form.js";

export function agentsView({ onMenu }) {
  let agents = [];
  let catalog = { tools: [], unavailable: [] };
  let models = [];
  let knowledgeBases = [];
  let destroyed = false;

  const list = h("ul", { class: "agent-list", "aria-label": "Your agents" });
  const status = h("p", { class: "muted", role: "status" });
  const editor = h("div", { class: "agent-editor" });
  const newButton = h("button", { type: "button", class: "primary" }, "New agent");
  const el = h("main", { class: "agents-page", "aria-labelledby": "agents-heading" },
    h("header", { class: "chat-header" },
      menuButton(onMenu),
      h("h1", { id: "agents-heading", class: "chat-heading" }, "Agents")),
    h("div", { class: "agents-body" },
      h("section", { class: "agent-index", "aria-label": "All agents" },
        h("p", { class: "muted" }, "An agent is a chat's instructions, model and tools. Each chat has one; new chats start with the default agent unless you start one here."),
        newButton, status, list),
      editor));
  document.title = "Agents · Colloquy";

  newButton.addEventListener("click", () => edit(null));

  // The form is made from what the page loaded (the servers' models, the tools): a click
  // before the load has answered waits for it, or the form would offer the default model only.
  async function edit(agent) {
    await loaded;
    if (destroyed) return;
    const form = agentForm({
      agent, catalog, models, knowledgeBases,
      onSaved: (saved) => {
        status.textContent = `Saved ${saved.name}.`;
        editor.replaceChildren();
        loaded = load();
      },
      onCancel: () => editor.replaceChildren(),
    });
    editor.replaceChildren(form.el);
    form.focus();
  }

  function startChat(agent) {
    settings.set(null, { ...settings.get(null), agentId: agent.id, enableTools: null });
    navigate("/");
  }

  function item(agent) {
    const label = agent.is_default ? `${agent.name} (default)` : agent.name;
    const tools = !agent.tools_enabled ? "tools off"
      : agent.enabled_tools ? `tools: ${agent.enabled_tools.join(", ") || "none"}` : "every tool a chat turns on";
    const remove = agent.is_default ? null : h("button", { type: "button", class: "danger", "aria-label": `Delete ${agent.name}` }, "Delete");
    remove?.addEventListener("click", async () => {
      const sure = await confirmDialog({
        title: `Delete ${agent.name}?`,
        body: `Its chats move to your default agent. This cannot be undone.`,
        confirm: "Delete",
        danger: true,
      });
      if (!sure) return;
      try {
        await api("DELETE", `/api/agents/${encodeURIComponent(agent.id)}`);
        status.textContent = `Deleted ${agent.name}.`;
        editor.replaceChildren();
        load();
      } catch (err) {
        status.textContent = `Not deleted: ${err.message}`;
      }
    });
    return h("li", null,
      h("span", { class: "account-item" },
        h("strong", null, label),
        h("span", { class: "muted" }, `${agent.model ?? "default model"} · ${tools}`)),
      h("span", { class: "agent-actions" },
        h("button", { type: "button", "aria-label": `Edit ${agent.name}`, onclick: () => edit(agent) }, "Edit"),
        h("button", { type: "button", "aria-label": `Start a chat with ${agent.name}`, onclick: () => startChat(agent) }, "Start a chat"),
        remove));
  }

  async function load() {
    try {
      const [listed, tools, served, bases] = await Promise.all([
        api("GET", "/api/agents"),
        api("GET", "/api/tools"),
        listModels().catch(() => ({ data: [] })),
        api("GET", "/api/knowledge-bases").catch(() => ({ knowledge_bases: [] })),
      ]);
      if (destroyed) return;
      agents = listed.agents ?? [];
      catalog = { tools: tools.tools ?? [], unavailable: tools.unavailable ?? [] };
      models = served.data ?? [];
      knowledgeBases = bases.knowledge_bases ?? [];
      list.replaceChildren(...agents.map(item));
    } catch (err) {
      if (!destroyed) status.textContent = `Could not load the agents: ${err.message}`;
    }
  }

  let loaded = load();
  return { el, destroy: () => { destroyed = true; } };
}
