// A deletion confirmed by typing a name back: the Delete button stays disabled until the
// field holds exactly the name. A modal <dialog>; Escape cancels; focus returns after.
import { h } from "../ui/dom.js";

export function typedConfirmDialog({ title, body, name, confirm }) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const field = h("input", { id: "typed-confirm", autocomplete: "off", spellcheck: "false" });
    const cancelButton = h("button", { type: "button" }, "Cancel");
    const okButton = h("button", { type: "button", class: "danger", disabled: true }, confirm);
    const dialog = h("dialog", { class: "confirm", "aria-labelledby": "typed-title", "aria-describedby": "typed-body" },
      h("h2", { id: "typed-title" }, title),
      h("p", { id: "typed-body" }, body),
      h("div", { class: "field" }, h("label", { for: "typed-confirm" }, `Type ${name} to confirm`), field),
      h("div", { class: "dialog-buttons" }, cancelButton, okButton));
    const close = (answer) => {
      dialog.close();
      dialog.remove();
      opener?.focus?.();
      resolve(answer);
    };
    field.addEventListener("input", () => (okButton.disabled = field.value !== name));
    cancelButton.addEventListener("click", () => close(null));
    okButton.addEventListener("click", () => close(field.value));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      close(null);
    });
    document.body.append(dialog);
    dialog.showModal();
    field.focus();
  });
}
