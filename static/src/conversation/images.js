// Images on user messages, as plain functions: what the composer refuses before uploading
// (not an image, too large, one too many), which images a stored message carries, and where
// their bytes are served. No DOM, no requests.
import { formatSize } from "../documents/format.js";

/// What the server takes when its limits cannot be read (its defaults).
export const DEFAULT_LIMITS = {
  max_image_bytes: 10 * 1024 * 1024,
  max_images_per_message: 8,
  mime_types: ["image/png", "image/jpeg", "image/gif", "image/webp"],
};

/// Why `file` cannot be attached beside `count` images already there, in words; null if it can.
/// The server checks the bytes again: this only spares an upload that would be refused.
export function refusalOf(file, limits, count) {
  const name = file.name || "The pasted image";
  if (!limits.mime_types.includes(file.type)) {
    return `${name} is not an image that can be sent (PNG, JPEG, GIF or WebP).`;
  }
  if (file.size > limits.max_image_bytes) {
    return `${name} is too large (${formatSize(file.size)}); an image may have at most ${formatSize(limits.max_image_bytes)}.`;
  }
  if (count >= limits.max_images_per_message) {
    return `A message may carry at most ${limits.max_images_per_message} images.`;
  }
  return null;
}

/// The image parts of a stored message (`{type: "image", attachment_id, mime_type}`).
export function imageParts(node) {
  return Array.isArray(node?.parts) ? node.parts.filter((p) => p.type === "image" && p.attachment_id) : [];
}

/// Where an image part's bytes are: its preview while it is only on this page, else the
/// chat's attachment URL.
export function imageUrl(chatId, part) {
  if (part.preview_url) return part.preview_url;
  return `/chat/api/${encodeURIComponent(chatId)}/attachments/${encodeURIComponent(part.attachment_id)}`;
}

/// The files of a paste or a drop (`DataTransfer`): only files, in order.
export function filesOf(transfer) {
  if (!transfer) return [];
  const files = [...(transfer.files ?? [])];
  if (files.length > 0) return files;
  return [...(transfer.items ?? [])].filter((item) => item.kind === "file").map((item) => item.getAsFile()).filter(Boolean);
}
