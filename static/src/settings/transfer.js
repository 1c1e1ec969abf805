// Chats moved out and in: on the account page, all chats as one zip and a JSON export imported
// as a new chat (`transferSection`); in a chat's settings, that chat as Markdown (the branch
// shown) or JSON (every branch, artifacts and metadata) (`chatExportLinks`). Downloads are
// plain links to the REST endpoints: the browser sends the session cookie.
import { api, chatPath } from "../api.js";
import { navigate } from "../router.js";
import { refreshChats } from "../chats/sidebar.js";
import { h } from "../ui/dom.js";
import { section } from "./section.js";

/// Largest export file the page sends (the server's limit, MAX_IMPORT_BYTES).
export const MAX_IMPORT_BYTES = 32 * 1024 * 1024;

export function transferSection() {
  const file = h("input", { type: "file", id: "import-file", accept: "application/json,.json", "aria-describedby": "import-hint" });
  const status = h("p", { class: "muted", role: "status" });
  file.addEventListener("change", async () => {
    const chosen = file.files?.[0];
    if (!chosen) return;
    file.value = "";
    if (chosen.size > MAX_IMPORT_BYTES) {
      status.textContent = `Not imported: ${chosen.name} is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MB.`;
      return;
    }
    let parsed;
    try {
      parsed = JSON.parse(await chosen.text());
    } catch {
      status.textContent = `Not imported: ${chosen.name} is not JSON (choose a chat's JSON export).`;
      return;
    }
    status.textContent = "Importing…";
    try {
      const made = await api("POST", "/chat/api/import", parsed);
      await refreshChats();
      const left = made.imported?.images_left_out ? ` (${made.imported.images_left_out} images were not in the export)` : "";
      status.textContent = `Imported “${made.title}”${left}.`;
      navigate(`/c/${encodeURIComponent(made.id)}`);
    } catch (err) {
      status.textContent = `Not imported: ${err.message}`;
    }
  });
  const el = section("transfer-heading", "Export and import",
    h("p", null, h("a", { href: "/chat/api/export", download: "" }, "Export all chats"),
      h("span", { class: "muted" }, " — a zip with each chat as JSON (to import back) and as Markdown.")),
    h("div", { class: "field" },
      h("label", { for: "import-file" }, "Import a chat"), file,
      h("span", { class: "muted", id: "import-hint" }, "Choose a chat's JSON export; it becomes a new chat. Images and documents are not part of an export.")),
    status);
  return { el };
}

/// The links that download one chat, for its settings panel.
export function chatExportLinks(chatId) {
  const link = (format, label) => h("a", { href: chatPath(chatId, `/export?format=${format}`), download: "" }, label);
  return h("div", { class: "field inline chat-export" },
    h("span", null, "Export this chat:"), link("markdown", "Export as Markdown"), link("json", "Export as JSON"));
}
