// Colloquy's browser UI: signs in (or finds the session), then shows the chat list beside the
// current conversation (or the knowledge bases page) and follows the URL. A session that ends mid-way brings the sign-in
// screen back over the same URL; drafts are kept in localStorage, so nothing typed is lost.
// static/README.md maps the UI's files.
import { api, onSignedOut } from "./api.js";
import { store } from "./store.js";
import { startRouter } from "./router.js";
import { h } from "./ui/dom.js";
import { signInView } from "./signin/signin.js";
import { sidebarView, refreshChats } from "./chats/sidebar.js";
import { conversationView } from "./conversation/view.js";
import { knowledgeView } from "./knowledge/page.js";
import { accountView } from "./settings/page.js";
import { agentsView } from "./agents/page.js";
import { automationsView } from "./automations/page.js";
import { adminView } from "./admin/page.js";
import { sharedView } from "./shared/page.js";

const root = document.getElementById("app");
let shell = null;

async function boot() {
  onSignedOut(() => {
    if (store.get().me) showSignIn(true);
  });
  startRouter();
  // A shared link's page is public: no "who am I", no sign-in, no chat list.
  const { name, token } = store.get().route;
  if (name === "shared") {
    root.replaceChildren(sharedView({ token }).el);
    return;
  }
  try {
    const me = await api("GET", "/auth/me", undefined, { quiet401: true });
    store.set({ me });
    showApp();
  } catch {
    showSignIn(false);
  }
}

function showSignIn(expired) {
  shell?.destroy();
  shell = null;
  store.set({ me: null });
  root.replaceChildren(signInView({
    expired,
    onSignedIn: async () => {
      store.set({ me: await api("GET", "/auth/me") });
      showApp();
    },
  }));
  document.title = "Sign in · Colloquy";
  root.querySelector("input")?.focus();
}

function showApp() {
  const notice = h("div", { class: "notice-bar", role: "status", hidden: true });
  const sidebar = sidebarView({ onSignOut: signOut, onNavigate: () => layout.classList.remove("drawer-open") });
  const main = h("div", { class: "main" });
  const scrim = h("div", { class: "scrim", onclick: () => layout.classList.remove("drawer-open") });
  const layout = h("div", { class: "layout" }, sidebar.el, scrim, main);
  root.replaceChildren(notice, layout);
  let view = null;
  let shown;
  const show = () => {
    const { name, chatId, kbId } = store.get().route;
    const key = name === "chat" || name === "home" ? `chat:${chatId ?? ""}` : `${name}:${kbId ?? ""}`;
    if (view && shown === key) return;
    view?.destroy();
    shown = key;
    const onMenu = () => layout.classList.add("drawer-open");
    const pages = {
      knowledge: () => knowledgeView({ kbId, onMenu }),
      settings: () => accountView({ onMenu }),
      agents: () => agentsView({ onMenu }),
      automations: () => automationsView({ onMenu }),
      admin: () => adminView({ onMenu }),
    };
    view = (pages[name] ?? (() => conversationView({ chatId, onMenu })))();
    main.replaceChildren(view.el);
  };
  const unsubscribe = store.subscribe((state, patch) => {
    if ("route" in patch) show();
    if ("notice" in patch) {
      notice.hidden = !state.notice;
      notice.textContent = state.notice?.text ?? "";
    }
  });
  show();
  refreshChats().catch(() => {});
  shell = {
    destroy() {
      unsubscribe();
      view?.destroy();
      sidebar.destroy();
    },
  };
}

async function signOut() {
  try {
    await api("POST", "/auth/logout");
  } catch {
    // Signed out either way.
  }
  showSignIn(false);
}

boot();
