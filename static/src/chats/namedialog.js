// Asks for a name in a modal <dialog> (a new folder's, a folder's new one): focus moves to the
// field, Escape or Cancel gives `null`, and focus returns to what opened it.
import { h } from "../ui/dom.js";

export function askName({ title, label, value = "", confirm = "Save", maxLength }) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const input = h("input", { value, maxlength: maxLength, autocomplete: "off", required: true, id: "name-dialog-input" });
    const form = h("form", { method: "dialog", class: "name-dialog" },
      h("label", { for: "name-dialog-input" }, label),
      input,
      h("div", { class: "dialog-buttons" },
        h("button", { type: "button", onclick: () => close(null) }, "Cancel"),
        h("button", { type: "submit", class: "primary" }, confirm)));
    const dialog = h("dialog", { class: "confirm", "aria-labelledby": "name-dialog-title" },
      h("h2", { id: "name-dialog-title" }, title), form);
    function close(answer) {
      dialog.close();
      dialog.remove();
      opener?.focus?.();
      resolve(answer);
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return input.focus();
      close(name);
    });
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      close(null);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    input.select();
  });
}
