// What a document row says: its size in words, its type in a word, and its processing state (the
// statuses of docs/spec.md#documents-api, plus whether the content is searchable, the failure's
// reason and the truncation warning) as one plain object. Pure functions: no DOM, no requests.

const UNITS = ["bytes", "KB", "MB", "GB", "TB"];

/// "812 bytes", "1.5 KB", "4 MB", "200 MB": binary units, at most one decimal, none when whole.
export function formatSize(bytes) {
  const n = Number(bytes);
  if (!Number.isFinite(n) || n < 0) return "";
  if (n < 1024) return n === 1 ? "1 byte" : `${Math.round(n)} bytes`;
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = value >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${Number.isInteger(shown) ? shown : shown.toFixed(1)} ${UNITS[unit]}`;
}

const TYPES = {
  "application/pdf": "PDF",
  "text/html": "HTML",
  "text/plain": "Text",
  "text/markdown": "Markdown",
  "text/csv": "CSV",
  "application/json": "JSON",
  "application/xml": "XML",
  "text/xml": "XML",
  "application/octet-stream": "Binary",
};

/// A short name for a MIME type ("PDF", "Markdown"), or the type itself when unknown.
export function typeLabel(type) {
  const base = String(type ?? "").split(";")[0].trim().toLowerCase();
  if (!base) return "Unknown type";
  if (TYPES[base]) return TYPES[base];
  if (base.startsWith("text/x-")) return `${base.slice(7)} code`;
  if (base.startsWith("image/")) return `${base.slice(6).toUpperCase()} image`;
  return base;
}

/// The inline state of a document from its JSON (`GET …/documents`):
/// `{kind, label, detail, busy}` where kind is "uploading", "processing", "searchable",
/// "stored" (processed, but a binary format whose content is not indexed) or "error";
/// `detail` is the reason for an error; `warning` is the truncation note, if any.
export function documentState(doc) {
  const warning = doc?.warning || null;
  switch (doc?.status) {
    case "uploading":
      return { kind: "uploading", label: "Uploading", detail: null, warning, busy: true };
    case "processing":
      return { kind: "processing", label: "Processing", detail: null, warning, busy: true };
    case "processed":
      return doc.searchable === false
        ? { kind: "stored", label: "Stored, not searchable", detail: "This file type is kept but its content is not indexed for search.", warning, busy: false }
        : { kind: "searchable", label: "Searchable", detail: null, warning, busy: false };
    case "error":
      return { kind: "error", label: "Processing failed", detail: doc.error || "The server gave no reason.", warning, busy: false };
    default:
      return { kind: "processing", label: String(doc?.status ?? "Unknown"), detail: null, warning, busy: false };
  }
}

/// Documents newest first (the server sends them so; a just-created one may arrive out of order).
export function newestFirst(documents) {
  return [...documents].sort((a, b) => String(b.uploaded_at ?? "").localeCompare(String(a.uploaded_at ?? "")));
}

/// Whether the list still changes on its own, so it is worth asking again.
export function stillProcessing(documents) {
  return documents.some((d) => d.status === "processing");
}
