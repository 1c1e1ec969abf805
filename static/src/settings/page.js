// The account page (`/settings`): the reader's display name, time zone (their schedules'
// default), default model (`models.js`) and password, their signed-in sessions
// (`sessions.js`), their API keys with how to use one from the OpenAI SDK (`keys.js`), and
// moving chats out and in (`transfer.js`). Everything goes through the same REST any client
// uses (`/auth/account`, `/chat/api/models`, `/auth/sessions`, `/auth/api-keys`,
// `/chat/api/export|import`).
import { api } from "../api.js";
import { store } from "../store.js";
import { h } from "../ui/dom.js";
import { menuButton } from "../ui/header.js";
import { sessionsSection } from "./sessions.js";
import { keysSection } from "./keys.js";
import { transferSection } from "./transfer.js";
import { defaultModelField } from "./models.js";
import { section } from "./section.js";

export function accountView({ onMenu }) {
  const sessions = sessionsSection();
  const parts = [profileSection(), passwordSection({ onChanged: () => sessions.refresh() }), sessions, keysSection(), transferSection()];
  const el = h("main", { class: "account-page", "aria-labelledby": "account-heading" },
    h("header", { class: "chat-header" },
      menuButton(onMenu),
      h("h1", { id: "account-heading", class: "chat-heading" }, "Account settings")),
    h("div", { class: "account-body" }, parts.map((p) => p.el)));
  document.title = "Account settings · Colloquy";
  return { el, destroy: () => parts.forEach((p) => p.destroy?.()) };
}

/// The profile is one form with one Save: the display name and the time zone a schedule made
/// without one fires in (an IANA name; empty: UTC; the server checks the name, the list offers
/// the browser's own zones), sent together in one PATCH, and the default model for new chats
/// (`models.js`), sent when it changed.
function profileSection() {
  const me = store.get().me ?? {};
  const name = h("input", { id: "display-name", maxlength: 100, autocomplete: "name", value: me.display_name ?? "", "aria-describedby": "display-name-hint" });
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  const here = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zone = h("input", { id: "time-zone", list: "time-zones", maxlength: 100, autocomplete: "off", placeholder: "UTC", "aria-describedby": "time-zone-hint" });
  const status = h("p", { class: "muted", role: "status" });
  const model = defaultModelField();
  const form = h("form", { class: "account-form" },
    h("p", { class: "muted" }, "Signed in as ", h("strong", null, me.username ?? "")),
    h("div", { class: "field" }, h("label", { for: "display-name" }, "Display name"), name,
      h("span", { class: "muted", id: "display-name-hint" }, "Shown in the app instead of your username; leave empty to show the username.")),
    h("div", { class: "field" }, h("label", { for: "time-zone" }, "Time zone"), zone,
      h("datalist", { id: "time-zones" }, zones.map((z) => h("option", { value: z }))),
      h("span", { class: "muted", id: "time-zone-hint" },
        `Schedules you create without a time zone fire in this one; empty means UTC.${here ? ` This browser is in ${here}.` : ""}`)),
    model.el,
    h("button", { type: "submit", class: "primary" }, "Save profile"), status);
  const showZone = (saved) => (zone.value = saved === "UTC" ? "" : saved ?? "");
  api("GET", "/auth/account").then((account) => showZone(account.time_zone)).catch(() => {});
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.textContent = "Saving…";
    try {
      const saved = await api("PATCH", "/auth/account", { display_name: name.value.trim() || null, time_zone: zone.value.trim() || null });
      name.value = saved.display_name ?? "";
      showZone(saved.time_zone);
      store.set({ me: { ...store.get().me, display_name: saved.display_name } });
      const defaultModel = await model.save();
      status.textContent = `Saved. Schedules default to ${saved.time_zone}.${defaultModel ? ` New chats start with ${defaultModel}.` : ""}`;
    } catch (err) {
      status.textContent = `Not saved: ${err.message}`;
    }
  });
  return { el: section("profile-heading", "Profile", form) };
}

function passwordSection({ onChanged }) {
  const field = (id, label, autocomplete) => {
    const input = h("input", { id, type: "password", autocomplete, required: true, minlength: id === "current-password" ? null : 8, maxlength: 1024 });
    return { input, el: h("div", { class: "field" }, h("label", { for: id }, label), input) };
  };
  const current = field("current-password", "Current password", "current-password");
  const next = field("new-password", "New password", "new-password");
  const again = field("repeat-password", "Repeat the new password", "new-password");
  const button = h("button", { type: "submit", class: "primary" }, "Change password");
  const status = h("p", { class: "muted", role: "status" });
  const form = h("form", { class: "account-form" },
    h("p", { class: "muted" }, "At least 8 characters. Every other browser signed in to this account is signed out; API keys keep working."),
    current.el, next.el, again.el, button, status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (next.input.value !== again.input.value) {
      status.textContent = "The new password and its repetition differ.";
      return again.input.focus();
    }
    button.disabled = true;
    status.textContent = "Changing…";
    try {
      const done = await api("POST", "/auth/account/password", { current_password: current.input.value, new_password: next.input.value });
      form.reset();
      const n = done.signed_out_sessions;
      status.textContent = `Password changed. ${n === 1 ? "1 other session was" : `${n} other sessions were`} signed out.`;
      onChanged();
    } catch (err) {
      status.textContent = `Not changed: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  });
  return { el: section("password-heading", "Password", form) };
}
