// The account page's sessions: every browser signed in to the account (when it started, when
// it was last seen, which browser), this one marked, each with a button that signs it out.
// Signing this one out is signing out.
import { api } from "../api.js";
import { h, when } from "../ui/dom.js";
import { section } from "./section.js";

/// A session's words: its browser (shortened) and when it started.
export function describeSession(session) {
  const agent = session.user_agent ? browserName(session.user_agent) : "Unknown browser";
  return `${agent}, signed in ${when(session.created_at)}`;
}

/// "Chrome on Linux" from a User-Agent, or its first words when it is not a known shape.
export function browserName(userAgent) {
  const browser = [["Edg/", "Edge"], ["Firefox/", "Firefox"], ["Chrome/", "Chrome"], ["Safari/", "Safari"]]
    .find(([mark]) => userAgent.includes(mark))?.[1];
  const system = [["Android", "Android"], ["iPhone", "iOS"], ["Windows", "Windows"], ["Mac OS", "macOS"], ["Linux", "Linux"]]
    .find(([mark]) => userAgent.includes(mark))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? userAgent.slice(0, 40);
}

export function sessionsSection() {
  const list = h("ul", { class: "account-list", "aria-label": "Your sessions" });
  const status = h("p", { class: "muted", role: "status" });
  let destroyed = false;

  async function refresh() {
    try {
      const { data } = await api("GET", "/auth/sessions");
      if (destroyed) return;
      list.replaceChildren(...data.map(item));
    } catch (err) {
      if (!destroyed) status.textContent = `Could not load the sessions: ${err.message}`;
    }
  }

  function item(session) {
    const words = describeSession(session);
    const seen = session.last_seen_at ? `last seen ${when(session.last_seen_at)}` : "not seen since";
    const button = h("button", { type: "button", "aria-label": session.current ? "Sign out this session" : `Sign out ${words}` }, "Sign out");
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        await api("DELETE", `/auth/sessions/${encodeURIComponent(session.id)}`);
        if (session.current) location.assign("/");
        else {
          status.textContent = "Signed out.";
          refresh();
        }
      } catch (err) {
        button.disabled = false;
        status.textContent = `Not signed out: ${err.message}`;
      }
    });
    return h("li", null,
      h("span", { class: "account-item" },
        h("span", null, words, session.current ? h("strong", null, " (this browser)") : null),
        h("span", { class: "muted" }, seen)),
      button);
  }

  refresh();
  const el = section("sessions-heading", "Sessions",
    h("p", { class: "muted" }, "Browsers signed in to this account."), list, status);
  return { el, refresh, destroy: () => { destroyed = true; } };
}
