// The admin page (`/admin`), for admins only (others get "Page not found", and the server
// answers them 403 anyway): users — create one with a one-time login link to hand over
// (shown once, with Copy), disable or enable, make or unmake admin, a new login link, delete
// with everything they own after the username is typed back — then the model servers' and
// MCP servers' health, the version and the storage used (status.js). Every action is one
// `/admin/api` request. The users table becomes a list of cards on narrow screens (app.css).
import { api } from "../api.js";
import { store } from "../store.js";
import { h, when } from "../ui/dom.js";
import { menuButton } from "../ui/header.js";
import { typedConfirmDialog } from "./confirm.js";
import { statusSections } from "./status.js";

export function adminView({ onMenu }) {
  const header = (text) => h("header", { class: "chat-header" },
    menuButton(onMenu),
    h("h1", { id: "admin-heading", class: "chat-heading" }, text));
  if (!store.get().me?.is_admin) {
    document.title = "Page not found · Colloquy";
    return {
      el: h("main", { class: "admin", "aria-labelledby": "admin-heading" }, header("Page not found"),
        h("div", { class: "admin-body" }, h("p", null, "There is no page here."))),
      destroy() {},
    };
  }
  let destroyed = false;
  const username = h("input", { id: "new-username", autocomplete: "off", maxlength: 64, required: true });
  const makeAdmin = h("input", { id: "new-is-admin", type: "checkbox" });
  const createButton = h("button", { type: "submit", class: "primary" }, "Create user");
  const form = h("form", { class: "admin-create", "aria-label": "Create a user" },
    h("div", { class: "field" }, h("label", { for: "new-username" }, "Username"), username),
    h("div", { class: "check" }, makeAdmin, h("label", { for: "new-is-admin" }, "Administrator")),
    createButton);
  const outcome = h("div", { class: "admin-outcome", role: "status" });
  const users = h("table", { class: "admin-users" });
  const statusArea = h("div", { class: "admin-status", "aria-busy": "true" }, h("p", { class: "muted" }, "Checking the servers…"));
  const el = h("main", { class: "admin", "aria-labelledby": "admin-heading" },
    header("Administration"),
    h("div", { class: "admin-body" },
      h("section", { class: "admin-section", "aria-labelledby": "admin-users" },
        h("h2", { id: "admin-users" }, "Users"),
        form, outcome,
        users),
      statusArea));
  document.title = "Administration · Colloquy";

  /// Shows a login link once, with a Copy button.
  function showLink(name, url, minutes) {
    const field = h("input", { id: "login-link", readonly: true, value: url });
    const copy = h("button", { type: "button" }, "Copy link");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(url);
        copy.textContent = "Copied";
      } catch {
        field.select();
        copy.textContent = "Select and copy";
      }
    });
    outcome.replaceChildren(
      h("p", null, `Give ${name} this link: it signs them in once, within ${minutes} minutes. It is not shown again.`),
      h("div", { class: "field link-field" }, h("label", { for: "login-link" }, `Login link for ${name}`), field, copy));
  }

  function fail(what, err) {
    outcome.replaceChildren(h("p", { class: "doc-refusal", role: "alert" }, `${what}: ${err.message}`));
  }

  /// Runs a change, then shows the refreshed list before any word of it (`done`),
  /// so the message never describes a list that has not caught up.
  async function act(what, request, done) {
    try {
      await request();
      await loadUsers();
      if (done) outcome.replaceChildren(h("p", null, done));
    } catch (err) {
      fail(what, err);
    }
  }

  function row(user) {
    const self = user.id === store.get().me?.id;
    const name = user.username;
    // Short words on the buttons; the username in each one's name, for screen readers.
    const action = (label, named, props) => h("button", { type: "button", "aria-label": named, ...props }, label);
    const toggleDisabled = user.disabled
      ? action("Enable", `Enable ${name}`, { disabled: self })
      : action("Disable", `Disable ${name}`, { disabled: self });
    const toggleAdmin = user.is_admin
      ? action("Remove admin", `Remove admin from ${name}`, { disabled: self })
      : action("Make admin", `Make admin: ${name}`, { disabled: self });
    const link = action("New login link", `New login link for ${name}`);
    const remove = action("Delete", `Delete ${name}`, { class: "danger", disabled: self });
    toggleDisabled.addEventListener("click", () => act("Not changed", () =>
      api("PATCH", `/admin/api/users/${encodeURIComponent(user.id)}`, { disabled: !user.disabled })));
    toggleAdmin.addEventListener("click", () => act("Not changed", () =>
      api("PATCH", `/admin/api/users/${encodeURIComponent(user.id)}`, { is_admin: !user.is_admin })));
    link.addEventListener("click", async () => {
      try {
        const made = await api("POST", `/admin/api/users/${encodeURIComponent(user.id)}/login-link`);
        showLink(name, made.login_url, made.expires_in_minutes);
      } catch (err) {
        fail("No link", err);
      }
    });
    remove.addEventListener("click", async () => {
      const typed = await typedConfirmDialog({
        title: `Delete ${name}?`,
        body: `${name}'s account and everything it owns (chats, documents, memories, agents, keys) will be deleted. This cannot be undone.`,
        name,
        confirm: "Delete user",
      });
      if (typed === null) return;
      await act("Not deleted",
        () => api("DELETE", `/admin/api/users/${encodeURIComponent(user.id)}`, { confirm: typed }),
        `${name} was deleted.`);
    });
    return h("tr", null,
      h("th", { scope: "row" }, name, self ? h("span", { class: "muted" }, " (you)") : null),
      h("td", { "data-label": "Role" }, user.is_admin ? "Admin" : "User"),
      h("td", { "data-label": "Status" }, user.disabled ? "Disabled" : "Active"),
      h("td", { "data-label": "Created" }, when(user.created_at)),
      h("td", { class: "admin-actions" }, toggleDisabled, toggleAdmin, link, remove));
  }

  async function loadUsers() {
    const { data } = await api("GET", "/admin/api/users");
    if (destroyed) return;
    users.replaceChildren(
      h("caption", { class: "visually-hidden" }, "Accounts on this server"),
      h("thead", null, h("tr", null,
        h("th", { scope: "col" }, "Username"), h("th", { scope: "col" }, "Role"), h("th", { scope: "col" }, "Status"),
        h("th", { scope: "col" }, "Created"), h("th", { scope: "col" }, "Actions"))),
      h("tbody", null, data.map(row)));
  }

  async function loadStatus() {
    try {
      const status = await api("GET", "/admin/api/status");
      if (destroyed) return;
      statusArea.replaceChildren(...statusSections(status));
    } catch (err) {
      statusArea.replaceChildren(h("p", { class: "doc-refusal", role: "alert" }, `Server status unavailable: ${err.message}`));
    }
    statusArea.setAttribute("aria-busy", "false");
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const wanted = username.value.trim();
    if (!wanted) return username.focus();
    createButton.disabled = true;
    try {
      const made = await api("POST", "/admin/api/users", { username: wanted, is_admin: makeAdmin.checked });
      username.value = "";
      makeAdmin.checked = false;
      showLink(made.user.username, made.login_url, made.expires_in_minutes);
      await loadUsers();
    } catch (err) {
      fail("Not created", err);
    } finally {
      createButton.disabled = false;
    }
  });

  loadUsers().catch((err) => fail("Users unavailable", err));
  loadStatus();
  return {
    el,
    destroy() {
      destroyed = true;
    },
  };
}
