// URLs: `/` (a new chat), `/c/{chatId}`, the knowledge bases page `/knowledge` (one
// opened: `/knowledge/{kbId}`), the account page `/settings`, the agents page `/agents`,
// `/automations` (workflows and schedules), `/admin`, and a shared link's page `/s/{token}`. Reload, back and deep links all go through here.
import { store } from "./store.js";

export function parse(pathname) {
  // A read-only link's page (shared/page.js): no sign-in, nothing else of the app.
  const shared = /^\/s\/([^/]+)\/?$/.exec(pathname);
  if (shared) return { name: "shared", chatId: null, kbId: null, token: decodeURIComponent(shared[1]) };
  const chat = /^\/c\/([^/]+)\/?$/.exec(pathname);
  if (chat) return { name: "chat", chatId: decodeURIComponent(chat[1]), kbId: null };
  if (/^\/admin\/?$/.test(pathname)) return { name: "admin", chatId: null, kbId: null };
  const knowledge = /^\/knowledge(?:\/([^/]+))?\/?$/.exec(pathname);
  if (knowledge) return { name: "knowledge", chatId: null, kbId: knowledge[1] ? decodeURIComponent(knowledge[1]) : null };
  if (/^\/settings\/?$/.test(pathname)) return { name: "settings", chatId: null, kbId: null };
  if (/^\/agents\/?$/.test(pathname)) return { name: "agents", chatId: null, kbId: null };
  if (/^\/automations\/?$/.test(pathname)) return { name: "automations", chatId: null, kbId: null };
  return { name: "home", chatId: null, kbId: null };
}

export function navigate(path, { replace = false } = {}) {
  if (location.pathname !== path) {
    if (replace) history.replaceState(null, "", path);
    else history.pushState(null, "", path);
  }
  store.set({ route: parse(path) });
}

export function startRouter() {
  window.addEventListener("popstate", () => store.set({ route: parse(location.pathname) }));
  store.set({ route: parse(location.pathname) });
}
