// The chat's agent in the settings panel: a select of the reader's agents showing the chat's
// (saved with PATCH; for a chat not created yet, kept in its settings and sent when it is
// created), the tools that agent allows (`/api/agents/{id}/chat/tools`), and the badge naming
// it in the chat's header (a link to the agents page). It does not hold the run settings
// (store.js does) and does not edit agents.
import { api } from "../api.js";
import { navigate } from "../router.js";
import { settings } from "../store.js";
import { h } from "../ui/dom.js";
import { icon } from "../ui/icons.js";

/// The select's label for an agent.
export const agentLabel = (agent) => (agent.is_default ? `${agent.name} (default)` : agent.name);

/// The chat's agent among the reader's: the one it names, else the default (a chat from before
/// agents, or whose agent was deleted).
export function agentOf(agents, agentId) {
  return agents.find((a) => a.id === agentId) ?? agents.find((a) => a.is_default) ?? agents[0] ?? null;
}

/// Each research tool (`[name, label]`) with whether the agent allows it; every one while the
/// agent's tool list (`allowed`, names) is not known yet.
export function researchChoices(tools, allowed) {
  return tools.map(([name, label]) => ({ name, label, allowed: allowed === null || allowed.includes(name) }));
}

/// Tools a chat has only when a message names them in `x_tools` (so the agent's listing, what
/// its chats have without asking, leaves them out): the code interpreter and the browser (its
/// first tool standing for both).
const REQUESTED_ONLY = ["code_interpreter", "browser_action"];

/// The header's badge naming the chat's agent, a link to the agents page; `show(agent)` names
/// it (hidden while the agent is not known).
export function agentBadge() {
  const name = h("span", { class: "agent-badge-name" });
  const el = h("a", { href: "/agents", class: "agent-badge", hidden: true, onclick: (event) => {
    event.preventDefault();
    navigate("/agents");
  } }, icon("user"), name);
  return {
    el,
    show(agent) {
      el.hidden = !agent;
      if (!agent) return;
      name.textContent = agent.name;
      el.setAttribute("aria-label", `Agent: ${agent.name}`);
      el.title = `Agent: ${agentLabel(agent)}`;
    },
  };
}

/// Of those, the ones `agent` lets a message ask for: it names no tools of its own ("every tool
/// a chat turns on"), its tools are on, and the server has them (`unavailable` names them
/// otherwise). `tools`, `unavailable`: the agent's listing (`/api/agents/{id}/chat/tools`).
export function requestable(agent, tools, unavailable = []) {
  if (!agent?.tools_enabled || Array.isArray(agent.enabled_tools) || tools.length === 0) return [];
  const listed = (name) => tools.some((t) => t.name === name) || unavailable.some((t) => t.name === name);
  return REQUESTED_ONLY.filter((name) => !listed(name));
}

/// The agent field and the allowed-tools line. `onChange(agent, allowed)` runs when the chat's
/// agent is known or changes (`allowed`: tool names, null until loaded) and when its tools load.
export function agentPicker(chatId, { onChange }) {
  let agents = [];
  let chosenId = chatId ? undefined : settings.get(null).agentId;
  let current = null;
  let allowed = null;
  let generation = 0;

  const select = h("select", { id: "agent-select", disabled: true }, h("option", { value: "" }, "Loading…"));
  const status = h("span", { class: "muted", role: "status" });
  const field = h("div", { class: "field inline" }, h("label", { for: "agent-select" }, "Agent"), select, status);
  const names = h("ul", { class: "tool-names", "aria-labelledby": "agent-tools-heading" });
  const none = h("span", { class: "muted", hidden: true }, "none: this agent's tools are off");
  const list = h("div", { class: "agent-tools" },
    h("span", { id: "agent-tools-heading" }, "Tools this agent allows:"), " ", names, none);
  const badge = agentBadge();

  function show() {
    current = agentOf(agents, chosenId);
    badge.show(current);
    select.replaceChildren(...agents.map((a) => h("option", { value: a.id }, agentLabel(a))));
    select.disabled = agents.length === 0;
    if (current) select.value = current.id;
  }

  /// Loads the tools of the agent shown; a later call wins over an earlier one still loading.
  async function loadTools() {
    const agent = current;
    const mine = ++generation;
    allowed = null;
    names.replaceChildren(h("li", { class: "muted" }, "loading…"));
    none.hidden = true;
    onChange(agent, null);
    if (!agent) return;
    try {
      const { tools, unavailable = [] } = await api("GET", `/api/agents/${encodeURIComponent(agent.id)}/chat/tools`);
      if (mine !== generation) return;
      const asked = requestable(agent, tools, unavailable);
      allowed = [...tools.map((t) => t.name), ...asked];
      names.replaceChildren(...tools.map((t) => h("li", { title: t.description ?? "" }, t.name)),
        // Tools a chat has when chosen in its settings (the code interpreter).
        ...asked.map((name) => h("li", { title: "when chosen in the chat's settings" }, name)),
        // Tools this server cannot offer now, and why (the browser without Chromium).
        ...unavailable.map((t) => h("li", { class: "muted" }, `${t.name}: not available (${t.reason})`)));
      names.hidden = tools.length === 0;
      none.hidden = tools.length > 0;
      onChange(agent, allowed);
    } catch (err) {
      if (mine !== generation) return;
      names.replaceChildren(h("li", { class: "muted" }, `could not be loaded: ${err.message}`));
    }
  }

  select.addEventListener("change", async () => {
    const previous = current;
    const picked = agents.find((a) => a.id === select.value);
    if (!picked) return;
    if (!chatId) {
      chosenId = picked.id;
      settings.set(null, { ...settings.get(null), agentId: picked.id, enableTools: null });
      show();
      status.textContent = "Saved.";
      loadTools();
      return;
    }
    status.textContent = "Saving…";
    try {
      const saved = await api("PATCH", `/chat/api/chats/${encodeURIComponent(chatId)}`, { agent_id: picked.id });
      chosenId = saved.agent_id ?? picked.id;
      // Picking an agent takes its tool default: on for one that names its tools.
      settings.set(chatId, { ...settings.get(chatId), enableTools: null });
      show();
      status.textContent = "Saved.";
      loadTools();
    } catch (err) {
      if (previous) select.value = previous.id;
      status.textContent = `Not saved: ${err.message}`;
    }
  });

  api("GET", "/api/agents").then(({ agents: listed }) => {
    agents = listed;
    if (!chatId && chosenId && !agents.some((a) => a.id === chosenId)) {
      // The agent chosen for new chats was deleted since.
      chosenId = null;
      settings.set(null, { ...settings.get(null), agentId: null });
    }
    if (chosenId === undefined) return;
    show();
    loadTools();
  }).catch((err) => {
    select.replaceChildren(h("option", { value: "" }, "—"));
    status.textContent = `Agents could not be loaded: ${err.message}`;
  });

  return {
    field,
    list,
    /// The header's badge naming the chat's agent.
    badge: badge.el,
    /// The agent shown (null until known).
    agent: () => current,
    /// Takes an agent saved elsewhere (its knowledge bases changed) and shows its tools again.
    replaceAgent(saved) {
      agents = agents.map((a) => (a.id === saved.id ? saved : a));
      show();
      loadTools();
    },
    /// Shows the stored chat's agent.
    setChat(chat) {
      const first = chosenId === undefined;
      chosenId = chat?.agent_id ?? null;
      if (agents.length === 0) return;
      if (first || current?.id !== agentOf(agents, chosenId)?.id) {
        show();
        loadTools();
      }
    },
  };
}
