// A screen's header, always one row: the "Show chats" button (shown on narrow screens, where
// the chat list is a drawer), the heading, a few `tools` that stay in the row at every width
// (the chat's model picker), and `actions`, the secondary buttons (Artifacts, Documents,
// Memory, Settings, …). Actions show icon and label when the conversation is wide, the icon
// alone (the label kept for screen readers and as a tooltip) when it is middling, and fold into
// the "More actions" menu when it is narrow. What decides is the conversation's own width, not
// the window's (container queries in app.css: the chat list and side panels take part of a
// wide window). The menu is a disclosure: a button with `aria-expanded` that opens the list of
// the same buttons (so their names and roles do not change), reached with Enter, Space or
// ArrowDown, walked with the arrow keys, Home and End, and closed by Escape or a choice.
import { h } from "./dom.js";
import { icon } from "./icons.js";

/// The "Show chats" button every screen's header starts with.
export function menuButton(onMenu) {
  return h("button", { type: "button", class: "icon menu", "aria-label": "Show chats", onclick: onMenu }, icon("menu"));
}

let headers = 0;

/// `{el, addAction}`: `actions` are `{button, icon}` pairs (an icon name from icons.js);
/// `addAction({button, icon})` adds one later, at the end.
export function chatHeader({ onMenu, title, tools = [], actions = [] }) {
  const id = `header-actions-${++headers}`;
  const list = h("div", { class: "header-actions", id, role: "group", "aria-label": "Chat actions" });
  const more = h("button", {
    type: "button", class: "icon more-actions", "aria-label": "More actions", "aria-expanded": "false", "aria-controls": id,
  }, icon("more"));
  const el = h("header", { class: "chat-header" }, menuButton(onMenu), title, ...tools, list, more);

  const folded = () => getComputedStyle(more).display !== "none";
  const items = () => [...list.children].filter((item) => !item.hidden && !item.disabled);
  const isOpen = () => more.getAttribute("aria-expanded") === "true";
  function setOpen(open, { focus = open ? "first" : null } = {}) {
    el.classList.toggle("actions-open", open);
    more.setAttribute("aria-expanded", String(open));
    if (focus === "first") items()[0]?.focus();
    if (focus === "last") items().at(-1)?.focus();
    if (focus === "more") more.focus();
  }

  more.addEventListener("click", () => setOpen(!isOpen()));
  more.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      setOpen(true, { focus: event.key === "ArrowDown" ? "first" : "last" });
    }
  });
  list.addEventListener("keydown", (event) => {
    if (!folded()) return;
    const all = items();
    const at = all.indexOf(document.activeElement);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 }[event.key];
    if (to !== undefined) {
      event.preventDefault();
      all[(to + all.length) % all.length]?.focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      setOpen(false, { focus: "more" });
    }
  });
  // A choice closes the menu (after the button's own handler ran); focus the choice left
  // behind in the closed menu goes back to the menu's button.
  list.addEventListener("click", () => {
    if (!folded() || !isOpen()) return;
    setOpen(false);
    if (list.contains(document.activeElement)) more.focus();
  });
  el.addEventListener("focusout", (event) => {
    if (isOpen() && !el.contains(event.relatedTarget) && event.relatedTarget) setOpen(false);
  });
  const outside = (event) => {
    if (isOpen() && !el.contains(event.target)) setOpen(false);
  };
  document.addEventListener("pointerdown", outside);

  function addAction({ button, icon: name }) {
    const label = h("span", { class: "action-label" });
    for (const node of [...button.childNodes]) {
      if (node.nodeType === Node.TEXT_NODE) label.append(node);
    }
    if (!button.title && label.textContent.trim()) button.title = label.textContent.trim();
    button.prepend(...(name ? [icon(name)] : []), label);
    button.classList.add("header-action");
    // A panel closing sends focus back to its button; folded away in the closed menu, the
    // button cannot take it, so the menu's button does.
    const focusButton = button.focus.bind(button);
    button.focus = (options) => (folded() && !isOpen() ? more.focus(options) : focusButton(options));
    list.append(button);
  }
  for (const action of actions) if (action?.button) addAction(action);

  return {
    el,
    addAction,
    /// Stops listening to the document (the screen is going away).
    destroy() {
      document.removeEventListener("pointerdown", outside);
    },
  };
}
