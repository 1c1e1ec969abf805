// The chat owner's "Share" dialog: make a read-only link (optionally expiring), copy it — its
// address is shown once, when it is made —, see the chat's links and revoke them. A modal
// <dialog>: focus moves in, Escape or Close shuts it and focus returns to the Share button.
// It talks to `/chat/api/chats/{id}/shares` only.
import { api, ApiError } from "../api.js";
import { h } from "../ui/dom.js";

/// The expiries offered, in seconds (`null`: until revoked).
export const EXPIRIES = [
  { label: "Never (until revoked)", seconds: null },
  { label: "In 1 hour", seconds: 3600 },
  { label: "In 1 day", seconds: 24 * 3600 },
  { label: "In 7 days", seconds: 7 * 24 * 3600 },
  { label: "In 30 days", seconds: 30 * 24 * 3600 },
];

/// How a link's lifetime reads in the list.
export function lifetime(share, now = Date.now()) {
  const made = new Date(share.created_at).toLocaleString();
  if (!share.expires_at) return `Made ${made}, no expiry`;
  const at = Date.parse(share.expires_at);
  return at <= now ? `Made ${made}, expired` : `Made ${made}, expires ${new Date(at).toLocaleString()}`;
}

/// The header's Share button for `chatId`; it opens the dialog.
export function shareButton(chatId) {
  const button = h("button", { type: "button", class: "icon-text share-toggle", "aria-haspopup": "dialog" }, "Share");
  button.addEventListener("click", () => openShareDialog(chatId));
  return button;
}

export function openShareDialog(chatId) {
  const base = `/chat/api/chats/${encodeURIComponent(chatId)}/shares`;
  const opener = document.activeElement;
  const expiry = h("select", { id: "share-expiry" },
    EXPIRIES.map((e, i) => h("option", { value: String(i) }, e.label)));
  const create = h("button", { type: "button", class: "primary" }, "Create link");
  const made = h("div", { class: "share-made", hidden: true });
  const status = h("p", { class: "share-status", role: "status" });
  const list = h("ul", { class: "share-list", "aria-label": "Links to this chat" });
  const close = h("button", { type: "button" }, "Close");
  const dialog = h("dialog", { class: "confirm share-dialog", "aria-labelledby": "share-title" },
    h("h2", { id: "share-title" }, "Share this chat"),
    h("p", { class: "muted" }, "Anyone with a link can read this chat's current branch, its images and artifacts, without signing in. They cannot write to it or see anything else of yours."),
    h("div", { class: "share-create" },
      h("label", { for: "share-expiry" }, "Link expires"), expiry, create),
    made,
    status,
    h("h3", null, "Links"),
    list,
    h("div", { class: "dialog-buttons" }, close));

  const shut = () => {
    dialog.close();
    dialog.remove();
    opener?.focus?.();
  };
  close.addEventListener("click", shut);
  dialog.addEventListener("cancel", (event) => {
    event.preventDefault();
    shut();
  });

  const say = (text) => (status.textContent = text);
  const failure = (err) => (err instanceof ApiError ? err.message : String(err));

  async function refresh() {
    try {
      const body = await api("GET", base);
      const shares = body?.data ?? [];
      list.replaceChildren(...(shares.length === 0
        ? [h("li", { class: "muted" }, "No links yet.")]
        : shares.map((share, index) => {
          const revoke = h("button", { type: "button", class: "danger", "aria-label": `Revoke link ${index + 1}` }, "Revoke");
          revoke.addEventListener("click", async () => {
            revoke.disabled = true;
            try {
              await api("DELETE", `${base}/${encodeURIComponent(share.id)}`);
              say("Link revoked: it no longer opens.");
              made.hidden = true;
              made.replaceChildren();
              await refresh();
              (list.querySelector("button") ?? create).focus();
            } catch (err) {
              revoke.disabled = false;
              say(`Could not revoke the link: ${failure(err)}`);
            }
          });
          return h("li", { class: "share-item" }, h("span", null, `Link ${index + 1}: ${lifetime(share)}`), revoke);
        })));
    } catch (err) {
      say(`Could not list the links: ${failure(err)}`);
    }
  }

  create.addEventListener("click", async () => {
    create.disabled = true;
    const { seconds } = EXPIRIES[Number(expiry.value)] ?? EXPIRIES[0];
    try {
      const share = await api("POST", base, seconds ? { expires_in: seconds } : {});
      const address = h("input", { type: "text", id: "share-url", readonly: true, value: share.url });
      const copy = h("button", { type: "button" }, "Copy link");
      copy.addEventListener("click", async () => {
        try {
          await navigator.clipboard.writeText(share.url);
          say("Link copied.");
        } catch {
          address.select();
          say("Select the link and copy it.");
        }
      });
      made.replaceChildren(
        h("label", { for: "share-url" }, "New link (shown only now)"),
        h("div", { class: "share-url-row" }, address, copy));
      made.hidden = false;
      say("Link created.");
      await refresh();
      address.focus();
      address.select();
    } catch (err) {
      say(`Could not create a link: ${failure(err)}`);
    } finally {
      create.disabled = false;
    }
  });

  document.body.append(dialog);
  dialog.showModal();
  create.focus();
  refresh();
}
