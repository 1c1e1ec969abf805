// The chat list, organised as the server keeps it: pinned chats on top, then the folders (one
// level, each a collapsible group; a chat is dragged onto one or moved with its menu), then
// the other chats, newest first, and at the bottom the archived ones (Restore). A search over
// titles, new chat, rename and delete (after a confirmation dialog), each chat's actions menu
// (`menu.js`), the way to the other pages, and who is signed in with a sign-out button.
import { api } from "../api.js";
import { navigate } from "../router.js";
import { store } from "../store.js";
import { h, when } from "../ui/dom.js";
import { confirmDialog } from "../ui/dialog.js";
import { icon } from "../ui/icons.js";
import { menuButton } from "./menu.js";
import { askName } from "./namedialog.js";
import { messageSearch } from "./search.js";

/// The drag data type of a chat row: its id.
const CHAT_DRAG_TYPE = "application/x-colloquy-chat";
/// Longest folder name the server takes.
const MAX_FOLDER_NAME = 80;

export async function refreshChats() {
  const [{ data: chats }, { data: folders }] = await Promise.all([
    api("GET", "/chat/api/chats?limit=200"),
    api("GET", "/chat/api/folders"),
  ]);
  store.set({ chats, folders });
}

const chatUrl = (id) => `/chat/api/chats/${encodeURIComponent(id)}`;
const folderUrl = (id) => `/chat/api/folders/${encodeURIComponent(id)}`;

export function sidebarView({ onSignOut, onNavigate }) {
  const search = h("input", { type: "search", id: "chat-search", placeholder: "Search chats", autocomplete: "off" });
  const sections = h("div", { class: "chat-sections" });
  const empty = h("p", { class: "muted", hidden: true });
  // Folders the reader closed, by id (open is the default); kept for this page's life.
  const closed = new Set();
  let archivedOpen = false;
  let archived = [];
  const archivedToggle = h("button", { type: "button", class: "archived-toggle", id: "archived-toggle", "aria-expanded": "false", "aria-controls": "archived-list" });
  const archivedList = h("ul", { class: "chat-list", id: "archived-list", "aria-labelledby": "archived-toggle", hidden: true });
  archivedToggle.addEventListener("click", async () => {
    archivedOpen = !archivedOpen;
    if (archivedOpen) await loadArchived();
    drawArchived();
  });
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
    sections,
    empty,
    messageSearch(search, go),
    h("div", { class: "archived-section" }, archivedToggle, archivedList),
    h("div", { class: "sidebar-bottom" },
      who,
      h("button", { type: "button", onclick: onSignOut }, "Sign out")));

  function go(path) {
    navigate(path);
    onNavigate?.();
  }

  function fail(what) {
    return (err) => store.set({ notice: { kind: "error", text: `Could not ${what}: ${err.message}` } });
  }

  /// PATCHes a chat's placement (`{pinned}`, `{archived}`, `{folder_id}`) and redraws.
  async function place(chat, change, what) {
    try {
      await api("PATCH", chatUrl(chat.id), change);
      await refreshChats();
      if (archivedOpen) await loadArchived();
      drawArchived();
    } catch (err) {
      fail(what)(err);
    }
  }

  function draw() {
    const { chats, route, me } = store.get();
    const folders = store.get().folders ?? [];
    who.textContent = me?.display_name || me?.username || "";
    if (route.name === "knowledge") knowledge.setAttribute("aria-current", "page");
    else knowledge.removeAttribute("aria-current");
    for (const link of pages) {
      if (location.pathname === link.dataset.path) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    const query = search.value.trim().toLowerCase();
    const shown = chats.filter((chat) => chat.title.toLowerCase().includes(query));
    const current = route.chatId;
    const folderIds = new Set(folders.map((folder) => folder.id));
    const pinned = shown.filter((chat) => chat.pinned);
    const inFolder = (folder) => shown.filter((chat) => !chat.pinned && chat.folder_id === folder.id);
    const others = shown.filter((chat) => !chat.pinned && !folderIds.has(chat.folder_id));

    const parts = [];
    if (pinned.length) {
      parts.push(h("h2", { class: "chat-section-title", id: "pinned-title" }, "Pinned"),
        h("ul", { class: "chat-list", "aria-labelledby": "pinned-title" }, pinned.map((chat) => item(chat, chat.id === current))));
    }
    const folderGroups = folders
      .map((folder) => folderGroup(folder, inFolder(folder), query))
      .filter(Boolean);
    parts.push(h("div", { class: "chat-section-head" },
      h("h2", { class: "chat-section-title", id: "folders-title" }, "Folders"),
      h("button", { type: "button", class: "icon-text", onclick: () => newFolder() }, "New folder")));
    if (folderGroups.length) parts.push(h("ul", { class: "folder-list", "aria-labelledby": "folders-title" }, folderGroups));
    const othersTitle = h("h2", { class: "chat-section-title", id: "others-title" }, "Chats");
    dropTarget(othersTitle, null);
    const list = h("ul", { class: "chat-list", "aria-label": "Chats" }, others.map((chat) => item(chat, chat.id === current)));
    dropTarget(list, null);
    parts.push(othersTitle, list);
    sections.replaceChildren(...parts);
    empty.hidden = shown.length > 0;
    empty.textContent = chats.length === 0 ? "No chats yet." : "No chat matches your search.";
  }

  /// A folder's group: its toggle (name and count; a drop target), its actions, its chats.
  /// Left out while searching when none of its chats match.
  function folderGroup(folder, chats, query) {
    if (query && chats.length === 0) return null;
    const open = query ? true : !closed.has(folder.id);
    const listId = `folder-${folder.id}`;
    const toggle = h("button", {
      type: "button", class: "folder-toggle", id: `${listId}-toggle`,
      "aria-expanded": String(open), "aria-controls": listId,
    }, icon(open ? "folderOpen" : "folder"), h("span", { class: "folder-name" }, folder.name), " ", h("span", { class: "folder-count" }, String(chats.length)));
    toggle.addEventListener("click", () => {
      if (closed.has(folder.id)) closed.delete(folder.id);
      else closed.add(folder.id);
      draw();
      document.getElementById(`${listId}-toggle`)?.focus();
    });
    dropTarget(toggle, folder);
    const actions = menuButton({
      label: `Folder actions for ${folder.name}`,
      items: () => [
        { label: "Rename folder", onSelect: () => renameFolder(folder) },
        { label: "Delete folder", onSelect: () => deleteFolder(folder) },
      ],
    });
    const list = h("ul", { class: "chat-list in-folder", id: listId, "aria-labelledby": `${listId}-toggle`, hidden: !open },
      chats.map((chat) => item(chat, chat.id === store.get().route.chatId)));
    if (open && chats.length === 0) list.append(h("li", { class: "muted folder-empty" }, "Drag a chat here, or use its menu."));
    return h("li", { class: "folder" }, h("div", { class: "folder-head" }, toggle, actions.button), list);
  }

  /// Makes `el` take a dragged chat row: into `folder`, or out of any folder when `null`.
  function dropTarget(target, folder) {
    target.addEventListener("dragover", (event) => {
      if (!event.dataTransfer.types.includes(CHAT_DRAG_TYPE)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
      target.classList.add("drop-here");
    });
    target.addEventListener("dragleave", () => target.classList.remove("drop-here"));
    target.addEventListener("drop", (event) => {
      target.classList.remove("drop-here");
      const id = event.dataTransfer.getData(CHAT_DRAG_TYPE);
      const chat = store.get().chats.find((c) => c.id === id);
      if (!chat) return;
      event.preventDefault();
      if ((chat.folder_id ?? null) === (folder?.id ?? null)) return;
      place(chat, { folder_id: folder?.id ?? null }, "move the chat");
    });
  }

  function item(chat, current) {
    const link = h("a", {
      href: `/c/${encodeURIComponent(chat.id)}`,
      class: "chat-link",
      draggable: "true",
      "aria-current": current ? "page" : null,
      onclick: (event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        go(`/c/${encodeURIComponent(chat.id)}`);
      },
    }, h("span", { class: "chat-title" }, chat.title), h("span", { class: "chat-when" }, when(chat.updated_at)));
    link.addEventListener("dragstart", (event) => {
      event.dataTransfer.setData(CHAT_DRAG_TYPE, chat.id);
      event.dataTransfer.effectAllowed = "move";
    });
    const rename = h("button", { type: "button", class: "icon row-action", "aria-label": `Rename chat ${chat.title}`, title: "Rename" }, icon("pencil"));
    const remove = h("button", { type: "button", class: "icon row-action", "aria-label": `Delete chat ${chat.title}`, title: "Delete" }, icon("close"));
    const actions = menuButton({ label: `Chat actions for ${chat.title}`, items: () => chatActions(chat, li) });
    const li = h("li", { class: current ? "current" : null }, link, rename, remove, actions.button);
    rename.addEventListener("click", () => startRename(li, chat));
    remove.addEventListener("click", () => deleteChat(chat));
    return li;
  }

  /// A chat's menu: pin, archive, rename, move between folders (or into a new one), delete.
  function chatActions(chat, li) {
    const folders = store.get().folders ?? [];
    const entries = [
      { label: chat.pinned ? "Unpin" : "Pin", onSelect: () => place(chat, { pinned: !chat.pinned }, chat.pinned ? "unpin the chat" : "pin the chat") },
      { label: "Rename", onSelect: () => startRename(li, chat) },
      { label: "Archive", onSelect: () => archive(chat) },
      "separator",
    ];
    for (const folder of folders) {
      if (folder.id !== chat.folder_id) {
        entries.push({ label: `Move to ${folder.name}`, onSelect: () => place(chat, { folder_id: folder.id }, "move the chat") });
      }
    }
    const from = folders.find((folder) => folder.id === chat.folder_id);
    if (from) entries.push({ label: `Remove from ${from.name}`, onSelect: () => place(chat, { folder_id: null }, "move the chat") });
    entries.push({ label: "New folder…", onSelect: () => newFolder(chat) }, "separator",
      { label: "Delete", onSelect: () => deleteChat(chat) });
    return entries;
  }

  async function archive(chat) {
    await place(chat, { archived: true }, "archive the chat");
    if (store.get().route.chatId !== chat.id) search.focus();
  }

  async function deleteChat(chat) {
    const ok = await confirmDialog({
      title: "Delete this chat?",
      body: `“${chat.title}” and everything in it (messages, documents, memories, artifacts) will be deleted. This cannot be undone.`,
      confirm: "Delete",
      danger: true,
    });
    if (!ok) return;
    try {
      await api("DELETE", chatUrl(chat.id));
      if (store.get().route.chatId === chat.id) navigate("/", { replace: true });
      await refreshChats();
      if (archivedOpen) {
        await loadArchived();
        drawArchived();
      }
    } catch (err) {
      fail("delete the chat")(err);
    }
  }

  /// Asks for a name and makes a folder; with `chat`, moves that chat into it.
  async function newFolder(chat) {
    const name = await askName({ title: "New folder", label: "Folder name", confirm: "Create", maxLength: MAX_FOLDER_NAME });
    if (!name) return;
    try {
      const folder = await api("POST", "/chat/api/folders", { name });
      if (chat) await api("PATCH", chatUrl(chat.id), { folder_id: folder.id });
      closed.delete(folder.id);
      await refreshChats();
    } catch (err) {
      fail("create the folder")(err);
    }
  }

  async function renameFolder(folder) {
    const name = await askName({ title: "Rename folder", label: "Folder name", value: folder.name, maxLength: MAX_FOLDER_NAME });
    if (!name || name === folder.name) return;
    try {
      await api("PATCH", folderUrl(folder.id), { name });
      await refreshChats();
    } catch (err) {
      fail("rename the folder")(err);
    }
  }

  async function deleteFolder(folder) {
    const ok = await confirmDialog({
      title: "Delete this folder?",
      body: `The folder “${folder.name}” will be deleted. Its chats are kept: they move back to your chat list.`,
      confirm: "Delete folder",
      danger: true,
    });
    if (!ok) return;
    try {
      await api("DELETE", folderUrl(folder.id));
      await refreshChats();
    } catch (err) {
      fail("delete the folder")(err);
    }
  }

  async function loadArchived() {
    try {
      ({ data: archived } = await api("GET", "/chat/api/chats?archived=true&limit=200"));
    } catch (err) {
      fail("list the archived chats")(err);
    }
  }

  /// The Archived toggle and, when open, the archived chats, each with Restore.
  function drawArchived() {
    archivedToggle.setAttribute("aria-expanded", String(archivedOpen));
    archivedToggle.replaceChildren(icon("archive"), h("span", {}, "Archived"));
    archivedList.hidden = !archivedOpen;
    if (!archivedOpen) return;
    if (archived.length === 0) {
      archivedList.replaceChildren(h("li", { class: "muted folder-empty" }, "No archived chats."));
      return;
    }
    archivedList.replaceChildren(...archived.map((chat) => {
      const link = h("a", {
        href: `/c/${encodeURIComponent(chat.id)}`,
        class: "chat-link",
        onclick: (event) => {
          if (event.metaKey || event.ctrlKey || event.shiftKey) return;
          event.preventDefault();
          go(`/c/${encodeURIComponent(chat.id)}`);
        },
      }, h("span", { class: "chat-title" }, chat.title), h("span", { class: "chat-when" }, `Archived ${when(chat.archived_at)}`));
      const restore = h("button", { type: "button", class: "icon-text", "aria-label": `Restore chat ${chat.title}` }, "Restore");
      restore.addEventListener("click", () => place(chat, { archived: false }, "restore the chat"));
      return h("li", {}, link, restore);
    }));
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
        await api("PATCH", chatUrl(chat.id), { title });
        await refreshChats();
      } catch (err) {
        fail("rename the chat")(err);
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
    if ("chats" in patch || "folders" in patch || "route" in patch || "me" in patch) draw();
  });
  draw();
  drawArchived();
  return { el, destroy: unsubscribe };
}
