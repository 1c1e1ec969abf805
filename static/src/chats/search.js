// Search inside chats: under the sidebar's filtered titles, the messages that match what is
// typed in its search box (`GET /chat/api/search`, asked once typing pauses), each with its
// chat's title and a snippet whose matching words are marked. A result opens its chat at the
// message (`/c/{chat}#m-{message}`; the conversation scrolls to it). Snippets are text: the
// server's highlight ranges become <mark> elements around text nodes, never parsed HTML.
import { api } from "../api.js";
import { h } from "../ui/dom.js";

/// How long typing must pause before searching: a search per word, not per key.
const DEBOUNCE_MS = 250;
/// Shorter queries match too much to be worth showing.
const MIN_QUERY_CHARS = 2;
/// The server's longest query.
const MAX_QUERY_CHARS = 200;
/// Results shown at most.
const LIMIT = 20;

/// `text` cut at the `[start, end)` ranges (UTF-16 units, ascending; others are skipped):
/// `{text, marked}` pieces in order.
export function segments(text, highlights) {
  const pieces = [];
  let at = 0;
  for (const [start, end] of highlights ?? []) {
    if (start < at || end <= start || end > text.length) continue;
    if (start > at) pieces.push({ text: text.slice(at, start), marked: false });
    pieces.push({ text: text.slice(start, end), marked: true });
    at = end;
  }
  if (at < text.length) pieces.push({ text: text.slice(at), marked: false });
  return pieces;
}

/// `segments` as nodes: marked pieces in <mark>, all of them text.
function highlighted(text, highlights) {
  return segments(text, highlights).map((piece) => (piece.marked ? h("mark", null, piece.text) : piece.text));
}

/// The link that opens a hit's chat at its message.
export const hitPath = (hit) => `/c/${encodeURIComponent(hit.chat_id)}#m-${encodeURIComponent(hit.message_id)}`;

/// The results section for the sidebar's search box `input`; `go(path)` opens a chat the way
/// the sidebar does. Returns the section's element; it listens to `input` itself.
export function messageSearch(input, go) {
  const status = h("p", { class: "muted message-search-status", role: "status" });
  const list = h("ul", { class: "message-hits", "aria-labelledby": "message-search-title" });
  const el = h("section", { class: "message-search", hidden: true },
    h("h2", { class: "chat-section-title", id: "message-search-title" }, "Messages"),
    status,
    list);
  let timer = null;
  let asked = 0;
  let controller = null;

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  });

  async function run() {
    const query = input.value.trim().slice(0, MAX_QUERY_CHARS);
    controller?.abort();
    const mine = ++asked;
    if (query.length < MIN_QUERY_CHARS) {
      el.hidden = true;
      list.replaceChildren();
      return;
    }
    el.hidden = false;
    status.textContent = "Searching messages…";
    controller = new AbortController();
    try {
      const params = new URLSearchParams({ q: query, limit: String(LIMIT) });
      const { data } = await api("GET", `/chat/api/search?${params}`, undefined, { signal: controller.signal });
      if (mine !== asked) return;
      draw(data);
    } catch (err) {
      if (mine !== asked || err.name === "AbortError") return;
      list.replaceChildren();
      status.textContent = `Could not search messages: ${err.message}`;
    }
  }

  function draw(hits) {
    status.textContent = hits.length === 0 ? "No message matches." : hits.length === 1 ? "1 message" : `${hits.length} messages`;
    list.replaceChildren(...hits.map((hit) => {
      const path = hitPath(hit);
      return h("li", null, h("a", {
        href: path,
        class: "message-hit",
        onclick: (event) => {
          if (event.metaKey || event.ctrlKey || event.shiftKey) return;
          event.preventDefault();
          open(hit);
        },
      },
      h("span", { class: "message-hit-chat" }, hit.chat_title),
      h("span", { class: "message-hit-snippet" }, highlighted(hit.snippet.text, hit.snippet.highlights))));
    }));
  }

  /// Opens the hit's chat, then names the message in the address: the conversation scrolls
  /// to it once loaded (or at once, when the chat is already open).
  function open(hit) {
    go(`/c/${encodeURIComponent(hit.chat_id)}`);
    location.hash = `m-${encodeURIComponent(hit.message_id)}`;
  }

  return el;
}
