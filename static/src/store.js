// The app's one store: who is signed in, the chat list, the current route, and the banner.
// Views subscribe and redraw what they show; nothing else holds shared mutable state.

const state = {
  me: null,
  chats: [],
  route: { name: "home", chatId: null },
  notice: null,
};
const listeners = new Set();

export const store = {
  get: () => state,
  set(patch) {
    Object.assign(state, patch);
    for (const listener of listeners) listener(state, patch);
  },
  subscribe(listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

/// Drafts survive reloads and expired sessions: the UI's own state, kept in localStorage.
export const drafts = {
  key: (chatId) => `colloquy.draft.${chatId ?? "new"}`,
  get(chatId) {
    try {
      return localStorage.getItem(this.key(chatId)) ?? "";
    } catch {
      return "";
    }
  },
  set(chatId, text) {
    try {
      if (text) localStorage.setItem(this.key(chatId), text);
      else localStorage.removeItem(this.key(chatId));
    } catch {
      // Storage full or disabled: the draft lives only in the textarea.
    }
  },
};

/// Whether an agent's tools are on unless a message turns them off: it names its tools
/// (`enabled_tools`). The default agent names none, so its research tools stay opt-in.
const namesTools = (agent) => Boolean(agent?.tools_enabled && Array.isArray(agent.enabled_tools));

/// Per-chat run settings (the Tools and Deep Think switches, research tools, iteration limit).
/// `enableTools: null` means the agent's default; `agentId` is the agent chosen for a chat not
/// created yet (a created chat's agent is the server's).
export const settings = {
  key: (chatId) => `colloquy.settings.${chatId ?? "new"}`,
  defaults: () => ({ enableTools: null, deepThink: false, tools: ["web_search", "fetch_url", "calculator"], maxIterations: 5, contextStrategy: null, agentId: null }),
  get(chatId) {
    try {
      const saved = JSON.parse(localStorage.getItem(this.key(chatId)) ?? "null");
      return saved ? { ...this.defaults(), ...saved } : this.defaults();
    } catch {
      return this.defaults();
    }
  },
  set(chatId, value) {
    try {
      localStorage.setItem(this.key(chatId), JSON.stringify(value));
    } catch {
      // Not saved; still used for this page.
    }
  },
  /// Whether the Tools switch is on: the reader's choice, else the agent's default.
  toolsOn: (value, agent = null) => value.enableTools ?? namesTools(agent),
  /// The request fields these settings add to a send, edit or regenerate, for a chat of
  /// `agent` (null while it is not known: the server applies its default). Deep Think implies
  /// tools: with its switch on and Tools off, the server picks the research tools itself. An
  /// agent that names its tools has them on unless the message says `enableTools: false`.
  request(value, agent = null) {
    const on = this.toolsOn(value, agent);
    if (!on && !value.deepThink) return value.enableTools === false && namesTools(agent) ? { enableTools: false } : {};
    // Only the research tools the agent allows (one that names its tools allows no others).
    const tools = namesTools(agent) ? value.tools.filter((t) => agent.enabled_tools.includes(t)) : value.tools;
    const options = on ? { x_tools: tools, max_iterations: value.maxIterations } : {};
    if (value.deepThink) options.x_deep_think = true;
    return { enableTools: true, web_search_options: options };
  },
};
