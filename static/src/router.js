// URLs: `/` (a new chat) and `/c/{chatId}`. Reload, back and deep links all go through here.
import { store } from "./store.js";

export function parse(pathname) {
  const match = /^\/c\/([^/]+)\/?$/.exec(pathname);
  if (match) return { name: "chat", chatId: decodeURIComponent(match[1]) };
  return { name: "home", chatId: null };
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
