// The chat list: newest first, a search over titles, new chat, rename and delete (after a
// confirmation dialog), the way to the knowledge bases page, and who is signed in with a
// sign-out button.
import { api } from "../api.js";
import { navigate } from "../router.js";
import { store } from "../store.js";
import { h, when } from "../ui/dom.js";
import { confirmDialog } from "../ui/dialog.js";

export async function refreshChats() {
  const { data } = await api("GET", "/chat/api/chats?limit=200");
  store.set({ chats: data });
}

export function sidebarView({ onSignOut, onNavigate }) {
  const search = h("input", { type: "search", id: "chat-search", placeholder: "Search chats", autocomplete: "off" });
  const list = h("ul", { class: "chat-list", "aria-label": "Chats" });
  const empty = h("p", { class: "muted", hidden: true });
  const knowledge = h("a", {
    href: "/knowledge",
    class: "nav-link",
    onclick: (event) => {
      if (event.metaKey || event.ctrlKey || event.shiftKey) return;
      event.preventDefault();
      go("/knowledge");
    },
  }, "Knowledge bases");
  const pageLink = (path, label) => h("a", { href: path, class: "nav-link", dataset: { path }, onclick: (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    go(path);
  } }, label);
  const who = h("span", { class: "who" });
  const pages = [pageLink("/automations", "Automations"), pageLink("/agents", "Agents"), pageLink("/settings", "Account settings"),
    ...(store.get().me?.is_admin ? [pageLink("/admin", "Admin")] : [])];
  const el = h("nav", { class: "sidebar", "aria-label": "Chats" },
    h("div", { class: "sidebar-top" },
      h("a", { href: "/", class: "brand", onclick: (e) => { e.preventDefault(); go("/"); } }, "Colloquy"),
      h("button", { type: "button", class: "primary", onclick: () => go("/") }, "New chat")),
    knowledge,
    pages,
    h("label", { for: "chat-search", class: "visually-hidden" }, "Search chats"),
    search,
    list,
    empty,
    h("div", { class: "sidebar-bottom" },
      who,
      h("button", { type: "button", onclick: onSignOut }, "Sign out")));

  function go(path) {
    navigate(path);
    onNavigate?.();
  }

  function draw() {
    const { chats, route, me } = store.get();
    who.textContent = me?.display_name || me?.username || "";
    if (route.name === "knowledge") knowledge.setAttribute("aria-current", "page");
    else knowledge.removeAttribute("aria-current");
    for (const link of pages) {
      if (location.pathname === link.dataset.path) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    const query = search.value.trim().toLowerCase();
    const shown = chats.filter((chat) => chat.title.toLowerCase().includes(query));
    list.replaceChildren(...shown.map((chat) => item(chat, chat.id === route.chatId)));
    empty.hidden = shown.length > 0;
    empty.textContent = chats.length === 0 ? "No chats yet." : "No chat matches your search.";
  }

  function item(chat, current) {
    const link = h("a", {
      href: `/c/${encodeURIComponent(chat.id)}`,
      class: "chat-link",
      "aria-current": current ? "page" : null,
      onclick: (event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        go(`/c/${encodeURIComponent(chat.id)}`);
      },
    }, h("span", { class: "chat-title" }, chat.title), h("span", { class: "chat-when" }, when(chat.updated_at)));
    const rename = h("button", { type: "button", class: "icon", "aria-label": `Rename chat ${chat.title}`, title: "Rename" }, "✎");
    const remove = h("button", { type: "button", class: "icon", "aria-label": `Delete chat ${chat.title}`, title: "Delete" }, "✕");
    const li = h("li", { class: current ? "current" : null }, link, rename, remove);
    rename.addEventListener("click", () => startRename(li, chat));
    remove.addEventListener("click", async () => {
      const ok = await confirmDialog({
        title: "Delete this chat?",
        body: `“${chat.title}” and everything in it (messages, documents, memories, artifacts) will be deleted. This cannot be undone.`,
        confirm: "Delete",
        danger: true,
      });
      if (!ok) return;
      try {
        await api("DELETE", `/chat/api/chats/${encodeURIComponent(chat.id)}`);
        if (store.get().route.chatId === chat.id) navigate("/", { replace: true });
        await refreshChats();
      } catch (err) {
        store.set({ notice: { kind: "error", text: `Could not delete the chat: ${err.message}` } });
      }
    });
    return li;
  }

  function startRename(li, chat) {
    const input = h("input", { value: chat.title, "aria-label": "New title", maxlength: 200 });
    const form = h("form", { class: "rename" }, input,
      h("button", { type: "submit" }, "Save"),
      h("button", { type: "button", onclick: () => draw() }, "Cancel"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const title = input.value.trim();
      if (!title) return input.focus();
      try {
        await api("PATCH", `/chat/api/chats/${encodeURIComponent(chat.id)}`, { title });
        await refreshChats();
      } catch (err) {
        store.set({ notice: { kind: "error", text: `Could not rename the chat: ${err.message}` } });
      }
    });
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") draw();
    });
    li.replaceChildren(form);
    input.focus();
    input.select();
  }

  search.addEventListener("input", draw);
  const unsubscribe = store.subscribe((_, patch) => {
    if ("chats" in patch || "route" in patch || "me" in patch) draw();
  });
  draw();
  return { el, destroy: unsubscribe };
}
