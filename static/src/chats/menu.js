// An actions menu behind a button (the WAI-ARIA menu button pattern): the button says it has a
// popup and whether it is open; the menu takes focus, moves with the arrow keys, Home and End,
// closes on Escape, Tab or a click outside, and gives focus back to its button. Items are
// built when it opens, so they reflect the chat or folder as it is then.
import { h } from "../ui/dom.js";
import { icon } from "../ui/icons.js";

/// `items()` returns `{ label, onSelect }` entries, or `"separator"`.
export function menuButton({ label, items }) {
  const button = h("button", {
    type: "button", class: "icon", "aria-label": label, title: label,
    "aria-haspopup": "menu", "aria-expanded": "false",
  }, icon("more"));
  let menu = null;

  function close({ focus = true } = {}) {
    if (!menu) return;
    menu.remove();
    menu = null;
    button.setAttribute("aria-expanded", "false");
    document.removeEventListener("pointerdown", outside, true);
    window.removeEventListener("resize", onViewportChange);
    if (focus) button.focus();
  }

  function outside(event) {
    if (menu && !menu.contains(event.target) && !button.contains(event.target)) close({ focus: false });
  }

  function onViewportChange() {
    close({ focus: false });
  }

  function open() {
    const entries = items();
    menu = h("div", { role: "menu", class: "popup-menu", "aria-label": label });
    for (const entry of entries) {
      if (entry === "separator") {
        menu.append(h("div", { role: "separator", class: "menu-separator" }));
        continue;
      }
      const item = h("button", { type: "button", role: "menuitem", tabindex: "-1" }, entry.label);
      item.addEventListener("click", () => {
        close({ focus: false });
        // The action may redraw the list (and this button with it); focus what is there then.
        Promise.resolve(entry.onSelect()).finally(() => {
          if (document.activeElement === document.body && button.isConnected) button.focus();
        });
      });
      menu.append(item);
    }
    menu.addEventListener("keydown", onKey);
    document.body.append(menu);
    place();
    button.setAttribute("aria-expanded", "true");
    document.addEventListener("pointerdown", outside, true);
    window.addEventListener("resize", onViewportChange);
    menuItems()[0]?.focus();
  }

  /// Below the button, right edges aligned, kept inside the viewport (above it when there is
  /// no room below).
  function place() {
    const anchor = button.getBoundingClientRect();
    const size = menu.getBoundingClientRect();
    const left = Math.max(8, Math.min(anchor.right - size.width, window.innerWidth - size.width - 8));
    const below = anchor.bottom + 4;
    const top = below + size.height > window.innerHeight - 8 ? Math.max(8, anchor.top - size.height - 4) : below;
    menu.style.left = `${left}px`;
    menu.style.top = `${top}px`;
  }

  const menuItems = () => [...menu.querySelectorAll("[role=menuitem]")];

  function onKey(event) {
    const all = menuItems();
    const at = all.indexOf(document.activeElement);
    const move = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 }[event.key];
    if (move !== undefined) {
      event.preventDefault();
      all[(move + all.length) % all.length]?.focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Tab") {
      close({ focus: false });
    }
  }

  button.addEventListener("click", () => (menu ? close() : open()));
  button.addEventListener("keydown", (event) => {
    if ((event.key === "ArrowDown" || event.key === "ArrowUp") && !menu) {
      event.preventDefault();
      open();
      if (event.key === "ArrowUp") menuItems().at(-1)?.focus();
    }
  });
  return { button, close };
}
