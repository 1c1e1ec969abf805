// The sign-in screen: a password form, what a spent or refused sign-in link means, and where
// accounts come from (an admin's /admin page; on a new server, the link Colloquy printed).
import { api, ApiError } from "../api.js";
import { h } from "../ui/dom.js";

const LINK_ERRORS = {
  link_spent: "That sign-in link was already used or has expired. Ask for a new one, or sign in with a password.",
  account_disabled: "That sign-in link belongs to an account that is disabled. Ask an admin to enable it.",
  link_failed: "That sign-in link did not work. Sign in with a password, or ask for a new link.",
};

export function signInView({ onSignedIn, expired }) {
  const params = new URLSearchParams(location.search);
  const linkError = LINK_ERRORS[params.get("signin")];
  const error = h("p", { class: "form-error", role: "alert", hidden: !linkError }, linkError ?? "");
  const username = h("input", { id: "signin-username", name: "username", autocomplete: "username", required: true });
  const password = h("input", { id: "signin-password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const button = h("button", { type: "submit", class: "primary" }, "Sign in");
  const form = h("form", { class: "signin-form", "aria-labelledby": "signin-title" },
    h("div", { class: "field" }, h("label", { for: "signin-username" }, "Username"), username),
    h("div", { class: "field" }, h("label", { for: "signin-password" }, "Password"), password),
    error,
    button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    button.disabled = true;
    try {
      await api("POST", "/auth/login", { username: username.value.trim(), password: password.value }, { quiet401: true });
      if (params.has("signin")) history.replaceState(null, "", location.pathname);
      await onSignedIn();
    } catch (err) {
      error.textContent = messageFor(err);
      error.hidden = false;
      password.select();
    } finally {
      button.disabled = false;
    }
  });
  return h("main", { class: "signin" },
    h("div", { class: "signin-card" },
      h("h1", { id: "signin-title" }, "Sign in to Colloquy"),
      expired ? h("p", { class: "notice", role: "status" }, "Your session ended. Sign in again: what you were typing is kept.") : null,
      form,
      h("p", { class: "hint" },
        "No account yet? Ask an admin: they create one, with a one-time sign-in link, on the ",
        h("a", { href: "/admin" }, "Administration page"),
        " (/admin). Starting a new server? Open the link Colloquy printed when it first started (",
        h("code", null, "/login?token=…"),
        ").")));
}

function messageFor(err) {
  if (!(err instanceof ApiError)) return "Signing in failed.";
  if (err.status === 401) return "Wrong username or password.";
  if (err.status === 429) {
    return `Too many failed attempts. Try again in ${err.retryAfter ?? "a few"} seconds.`;
  }
  return err.message;
}
