// A confirmation in a modal <dialog>: focus moves in, Escape cancels, focus returns after.
import { h } from "./dom.js";

export function confirmDialog({ title, body, confirm = "OK", danger = false }) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const cancelButton = h("button", { type: "button" }, "Cancel");
    const okButton = h("button", { type: "button", class: danger ? "danger" : "primary" }, confirm);
    const dialog = h("dialog", { class: "confirm", "aria-labelledby": "dialog-title", "aria-describedby": "dialog-body" },
      h("h2", { id: "dialog-title" }, title),
      h("p", { id: "dialog-body" }, body),
      h("div", { class: "dialog-buttons" }, cancelButton, okButton));
    const close = (answer) => {
      dialog.close();
      dialog.remove();
      opener?.focus?.();
      resolve(answer);
    };
    cancelButton.addEventListener("click", () => close(false));
    okButton.addEventListener("click", () => close(true));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      close(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancelButton.focus();
  });
}
