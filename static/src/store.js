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

/// Per-chat run settings (the Tools and Deep Think switches, research tools, iteration limit).
export const settings = {
  key: (chatId) => `colloquy.settings.${chatId ?? "new"}`,
  defaults: () => ({ enableTools: false, deepThink: false, tools: ["web_search", "fetch_url", "calculator"], maxIterations: 5, contextStrategy: null }),
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
  /// The request fields these settings add to a send, edit or regenerate. Deep Think implies
  /// tools: with its switch on and Tools off, the server picks the research tools itself.
  request(value) {
    if (!value.enableTools && !value.deepThink) return {};
    const options = value.enableTools ? { x_tools: value.tools, max_iterations: value.maxIterations } : {};
    if (value.deepThink) options.x_deep_think = true;
    return { enableTools: true, web_search_options: options };
  },
};
