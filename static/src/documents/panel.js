// The documents sidebar (docs/spec.md#documents-sidebar): a drop zone and a file picker, uploads
// through tus (`tus.js`) with progress, cancel and resume, the chat's documents newest first with
// their size, type and inline status, delete with confirmation, and the toolbar button whose badge
// counts the documents. The list is asked again while anything is processing, so the badge and the
// marks follow the server without a reload. It draws only its own panel. A knowledge base's page
// shows the same panel (`inline`, always open) over its own resource (`base`:
// `/api/knowledge-bases/{id}`, which answers as a chat's `…/documents` and `…/uploads` do).
import { api, chatPath, ApiError } from "../api.js";
import { h } from "../ui/dom.js";
import { icon } from "../ui/icons.js";
import { confirmDialog } from "../ui/dialog.js";
import { formatSize, typeLabel, documentState, newestFirst, stillProcessing } from "./format.js";
import { TusUpload, uploadOptions } from "./tus.js";

/// How often the list is asked again while a document is processing.
const POLL_MS = 1500;

/// `base`: the resource whose `/documents` and `/uploads` are shown (the chat's by default);
/// `noun`: what holds them, in words ("this chat"); `inline`: always open, without a toggle;
/// `onListed(documents)`: after each time the list is read.
export function documentsPanel(chatId, { onToggle = () => {}, base = chatPath(chatId), noun = "this chat", inline = false, onListed = () => {} } = {}) {
  let documents = [];
  let limits = null;
  /// How many files it may hold, from the documents list (`limits`).
  let maxFiles = null;
  let pollTimer = null;
  let destroyed = false;
  let loaded = false;
  let generation = 0;
  const uploads = new Set();
  const queue = [];
  let uploading = false;

  const badge = h("span", { class: "count-badge", hidden: true });
  const button = h("button", { type: "button", class: "icon-text", "aria-expanded": "false", "aria-controls": "documents-panel" }, "Documents ", badge);
  const picker = h("input", { type: "file", multiple: true, class: "visually-hidden", tabindex: "-1", "aria-hidden": "true" });
  const choose = h("button", { type: "button", class: "primary" }, "Choose files…");
  const limitsLine = h("p", { class: "muted doc-limits" });
  const zone = h("div", { class: "dropzone" },
    h("p", null, "Drag files here, or"), choose, picker, limitsLine);
  const refusal = h("div", { class: "doc-refusal", role: "alert" });
  const announce = h("p", { class: "visually-hidden", role: "status" });
  const uploadList = h("ul", { class: "upload-list", "aria-label": "Uploads in progress", hidden: true });
  const list = h("ul", { class: "doc-list", "aria-label": `Documents in ${noun}` });
  const empty = h("p", { class: "muted" }, "No documents yet. They are searched by the assistant when you ask about them.");
  const loadError = h("p", { class: "doc-refusal", hidden: true });
  const closeButton = h("button", { type: "button", class: "icon", "aria-label": "Close documents" }, "×");
  const el = h("section", { id: "documents-panel", class: inline ? "documents-panel inline-panel" : "side-panel documents-panel", "aria-labelledby": "documents-title", hidden: !inline },
    h("div", { class: "side-head" }, h("h2", { id: "documents-title" }, "Documents"), inline ? null : closeButton),
    zone, refusal, announce, uploadList, loadError, list, empty);

  const setOpen = (open) => {
    el.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    onToggle(open);
    if (open) {
      refresh();
      loadLimits();
      choose.focus();
    }
  };
  button.addEventListener("click", () => setOpen(el.hidden));
  closeButton.addEventListener("click", () => {
    setOpen(false);
    button.focus();
  });
  el.addEventListener("keydown", (event) => {
    if (inline) return;
    if (event.key === "Escape" && !event.defaultPrevented && !document.querySelector("dialog[open]")) {
      setOpen(false);
      button.focus();
    }
  });

  choose.addEventListener("click", () => picker.click());
  zone.addEventListener("click", (event) => {
    if (event.target === zone || event.target.tagName === "P") picker.click();
  });
  picker.addEventListener("change", () => {
    add([...picker.files]);
    picker.value = "";
  });
  for (const type of ["dragenter", "dragover"]) {
    el.addEventListener(type, (event) => {
      if (!event.dataTransfer?.types?.includes("Files")) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      zone.classList.add("dragging");
    });
  }
  el.addEventListener("dragleave", (event) => {
    if (!el.contains(event.relatedTarget)) zone.classList.remove("dragging");
  });
  el.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    add([...(event.dataTransfer?.files ?? [])]);
  });

  async function loadLimits() {
    if (limits) return limits;
    try {
      limits = await uploadOptions(`${base}/uploads`);
    } catch {
      limits = { maxSize: null };
    }
    limitsLine.textContent = limits.maxSize ? `Up to ${limitText(limits.maxSize)} per file.` : "";
    return limits;
  }

  // ---- the list ----

  async function refresh() {
    const mine = ++generation;
    clearTimeout(pollTimer);
    pollTimer = null;
    try {
      const body = await api("GET", `${base}/documents`);
      if (destroyed || mine !== generation) return;
      documents = newestFirst(body.documents ?? []);
      maxFiles = body.limits?.max_files_per_chat ?? body.limits?.max_files ?? maxFiles;
      loaded = true;
      loadError.hidden = true;
      draw();
      onListed(documents);
    } catch (err) {
      if (destroyed || mine !== generation) return;
      if (err instanceof ApiError && err.status === 401) return;
      loadError.textContent = `Could not load the documents: ${err.message}`;
      loadError.hidden = false;
    }
    if (!destroyed && mine === generation && (stillProcessing(documents) || uploads.size > 0)) {
      pollTimer = setTimeout(refresh, POLL_MS);
    }
  }

  function draw() {
    const count = documents.length;
    badge.textContent = String(count);
    badge.hidden = count === 0;
    button.title = `${count} document${count === 1 ? "" : "s"} in ${noun}`;
    // An upload this page is sending is shown with its progress bar, not twice.
    const sending = new Set([...uploads].map((u) => u.artifactId).filter(Boolean));
    const rows = documents.filter((d) => !sending.has(d.artifact_id)).map(documentRow);
    list.replaceChildren(...rows);
    list.hidden = rows.length === 0;
    empty.hidden = !loaded || count > 0 || uploads.size > 0;
  }

  function documentRow(doc) {
    const state = documentState(doc);
    const id = `doc-${String(doc.artifact_id).replace(/[^A-Za-z0-9_-]/g, "")}`;
    let mark;
    if (state.kind === "error" || state.kind === "stored") {
      mark = [
        h("span", { class: `doc-mark mark-${state.kind}`, role: "img", tabindex: "0", "aria-label": state.label, "aria-describedby": `${id}-why` }, state.kind === "error" ? "!" : "–"),
        h("span", { class: "tip", role: "tooltip", id: `${id}-why` }, state.detail),
      ];
    } else if (state.busy) {
      mark = h("span", { class: "doc-mark spinner", role: "img", "aria-label": state.label });
    } else {
      mark = h("span", { class: "doc-mark mark-searchable", role: "img", "aria-label": state.label }, icon("check"));
    }
    const remove = h("button", { type: "button", class: "doc-delete", "aria-label": `Delete ${doc.filename}` }, "Delete");
    remove.addEventListener("click", () => removeDocument(doc));
    return h("li", { class: `doc doc-${state.kind}` },
      h("span", { class: "doc-state" }, mark),
      h("div", { class: "doc-main" },
        h("span", { class: "doc-name" }, doc.filename),
        h("span", { class: "doc-meta muted" }, `${formatSize(doc.size)} · ${typeLabel(doc.type)}${state.busy ? ` · ${state.label.toLowerCase()}…` : ""}`),
        state.warning ? h("p", { class: "doc-warning" }, icon("warning"), ` Truncated: ${state.warning}`) : null),
      remove);
  }

  async function removeDocument(doc) {
    const sure = await confirmDialog({
      title: `Delete ${doc.filename}?`,
      body: `It leaves ${noun} and the assistant can no longer search it.`,
      confirm: "Delete",
      danger: true,
    });
    if (!sure) return;
    try {
      await api("DELETE", `${base}/documents/${encodeURIComponent(doc.artifact_id)}`);
      announce.textContent = `Deleted ${doc.filename}.`;
    } catch (err) {
      refusal.textContent = `Could not delete ${doc.filename}: ${err.message}`;
    }
    await refresh();
  }

  // ---- uploads ----

  async function add(files) {
    if (files.length === 0) return;
    refusal.textContent = "";
    const { maxSize } = await loadLimits();
    const refused = [];
    // Uploads this page is sending are already in the list; queued ones are not yet.
    let room = maxFiles === null ? Infinity : maxFiles - documents.length - queue.length;
    for (const file of files) {
      if (maxSize !== null && file.size > maxSize) {
        refused.push(`${file.name} is ${formatSize(file.size)}; the most a document may have is ${formatSize(maxSize)}.`);
        continue;
      }
      if (room <= 0) {
        refused.push(`${file.name}: ${noun} may hold at most ${maxFiles} documents; delete one first.`);
        continue;
      }
      room -= 1;
      queue.push(file);
    }
    if (refused.length > 0) refusal.textContent = `Not uploaded: ${refused.join(" ")}`;
    pump();
  }

  async function pump() {
    if (uploading) return;
    uploading = true;
    while (queue.length > 0 && !destroyed) {
      await upload(queue.shift());
    }
    uploading = false;
  }

  async function upload(file) {
    const progress = h("progress", { max: String(Math.max(1, file.size)), value: "0", "aria-label": `Upload of ${file.name}` });
    const state = h("span", { class: "upload-state" }, "Starting…");
    const cancel = h("button", { type: "button", "aria-label": `Cancel upload of ${file.name}` }, "Cancel");
    const row = h("li", { class: "upload" },
      h("div", { class: "doc-main" }, h("span", { class: "doc-name" }, file.name), progress, state), cancel);
    let sent = 0;
    const words = (extra) => `${formatSize(sent)} of ${formatSize(file.size)}${extra ? ` · ${extra}` : ""}`;
    const entry = { tus: null, artifactId: null };
    const tus = new TusUpload({
      endpoint: `${base}/uploads`,
      file,
      onCreated: (created) => {
        // The document exists from now on: the badge counts it at once.
        entry.artifactId = created?.artifact_id ?? null;
        refresh();
      },
      onProgress: (bytes) => {
        sent = bytes;
        progress.value = bytes;
        if (!row.classList.contains("reconnecting")) state.textContent = words("uploading");
      },
      onState: (kind, attempt) => {
        row.classList.toggle("reconnecting", kind === "reconnecting");
        if (kind === "reconnecting") state.textContent = words(`connection lost, reconnecting… (attempt ${attempt})`);
        else if (kind === "uploading") state.textContent = words("uploading");
        else if (kind === "finishing") state.textContent = "Uploaded; processing…";
      },
    });
    entry.tus = tus;
    uploads.add(entry);
    uploadList.append(row);
    uploadList.hidden = false;
    empty.hidden = true;
    let failed = false;
    cancel.addEventListener("click", () => {
      // Cancel terminates the upload on the server; after a failure it also clears what was
      // left there (a document still "uploading").
      tus.cancel();
      if (failed) {
        row.remove();
        uploadList.hidden = uploadList.children.length === 0;
        return;
      }
      state.textContent = "Cancelling…";
      cancel.disabled = true;
    });
    try {
      await tus.start();
      row.remove();
      announce.textContent = `${file.name} uploaded; processing.`;
    } catch (err) {
      if (err.code === "cancelled") {
        // The list is asked again once the server has ended the upload and its document.
        await tus.cancel();
        row.remove();
        announce.textContent = `Upload of ${file.name} cancelled.`;
      } else {
        failed = true;
        row.classList.add("failed");
        progress.remove();
        state.textContent = `Failed: ${err.message}`;
        refusal.textContent = `${file.name} was not uploaded: ${err.message}`;
        cancel.textContent = "Dismiss";
        cancel.setAttribute("aria-label", `Dismiss ${file.name}`);
        cancel.disabled = false;
      }
    } finally {
      uploads.delete(entry);
      uploadList.hidden = uploadList.children.length === 0;
      if (!destroyed) await refresh();
    }
  }

  if (inline) {
    refresh();
    loadLimits();
  }

  return {
    el,
    button,
    get open() {
      return !el.hidden;
    },
    hide: () => {
      if (!el.hidden) setOpen(false);
    },
    refresh,
    destroy() {
      destroyed = true;
      clearTimeout(pollTimer);
      for (const entry of uploads) entry.tus.cancel();
    },
  };
}

/// The upload limit in the units it is configured and documented in: the default, 200,000,000
/// bytes (docs/spec.md's "200 MB", tus's `Tus-Max-Size`), is a whole number of decimal
/// megabytes, which `formatSize`'s binary units would call "191 MB"; a limit set in binary
/// units (6 MiB) keeps `formatSize`'s words.
function limitText(bytes) {
  const megabytes = bytes / 1_000_000;
  return Number.isInteger(megabytes) ? `${megabytes} MB` : formatSize(bytes);
}
