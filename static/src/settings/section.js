// A titled part of the account page: a <section> named by its <h2>.
import { h } from "../ui/dom.js";

export function section(id, title, ...children) {
  return h("section", { class: "account-section", "aria-labelledby": id }, h("h2", { id }, title), ...children);
}
