// A small tus 1.0 client (core, creation, termination), what the server's `…/uploads` speaks:
// POST creates the upload (its URL comes back in `Location`), PATCHes send the file in chunks
// from the server's `Upload-Offset`, DELETE terminates. After a dropped connection it asks the
// server (HEAD) how many bytes it really has and continues from there, with backoff. It owns
// no DOM: the panel draws what `onProgress` and `onState` report.

export const TUS_VERSION = "1.0.0";
/// Bytes per PATCH: small enough that a dropped connection costs little and progress moves,
/// large enough that a 200 MB file takes a couple of hundred requests, not thousands.
export const CHUNK_BYTES = 1024 * 1024;
/// Attempts to reconnect before an upload is given up (about a minute with the backoff below).
export const MAX_RECONNECTS = 10;
/// Termination may meet a PATCH the server is still closing (409): tried this many times.
const TERMINATION_TRIES = 5;

/// The next chunk to send: `{start, end}` (end exclusive), or null when all is sent.
export function planChunk(offset, size, chunkBytes = CHUNK_BYTES) {
  const start = Math.max(0, Number(offset) || 0);
  if (start >= size) return null;
  return { start, end: Math.min(size, start + Math.max(1, chunkBytes)) };
}

/// The wait before reconnect attempt `attempt` (1-based): 0.5 s, 1 s, 2 s, 4 s, then 8 s.
export function backoffDelay(attempt) {
  return Math.min(8000, 500 * 2 ** Math.max(0, attempt - 1));
}

/// `Upload-Metadata`: comma-separated `key base64(UTF-8 value)` pairs.
export function encodeMetadata(metadata) {
  return Object.entries(metadata)
    .map(([key, value]) => {
      const bytes = new TextEncoder().encode(String(value));
      let binary = "";
      for (const byte of bytes) binary += String.fromCharCode(byte);
      return `${key} ${btoa(binary)}`;
    })
    .join(",");
}

/// The offset a response states, or null when absent or malformed.
export function parseOffset(value) {
  if (value === null || value === undefined || !/^\s*\d+\s*$/.test(String(value))) return null;
  return Number(value);
}

/// Whether a failed request is worth retrying after asking the server for its offset: no
/// answer at all (status 0), a server or gateway failure, or an offset that no longer matches
/// (409: the server kept fewer or more bytes than this client thought).
export function retryable(status) {
  return status === 0 || status === 409 || status === 423 || status === 429 || status >= 500;
}

/// An upload refused or failed for good: `status` and the server's `code` and `message`.
export class UploadError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function errorFrom(status, text, fallback) {
  try {
    const body = JSON.parse(text);
    if (body?.error) return new UploadError(status, body.error.code ?? `http_${status}`, body.error.message ?? fallback);
  } catch {
    // Not JSON.
  }
  return new UploadError(status, `http_${status}`, fallback);
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/// Asks the endpoint what it allows: `{maxSize}` (bytes, or null when it does not say).
export async function uploadOptions(endpoint) {
  const response = await fetch(endpoint, { method: "OPTIONS", credentials: "same-origin" });
  if (!response.ok) return { maxSize: null };
  return { maxSize: parseOffset(response.headers.get("Tus-Max-Size")) };
}

/// One file's upload. `start()` resolves when the server has every byte (or rejects with an
/// `UploadError`); `cancel()` stops it and terminates it on the server.
/// `onCreated(body)` (the server's answer to the creation: `artifact_id`, `status`…),
/// `onProgress(sent, size)`, `onState(state, detail)`: state is "creating", "uploading",
/// "reconnecting" (detail: the attempt), "finishing", "done", "cancelled" or "failed".
export class TusUpload {
  constructor({ endpoint, file, chunkBytes = CHUNK_BYTES, onCreated = () => {}, onProgress = () => {}, onState = () => {} }) {
    this.onCreated = onCreated;
    this.endpoint = endpoint;
    this.file = file;
    this.chunkBytes = chunkBytes;
    this.onProgress = onProgress;
    this.onState = onState;
    this.url = null;
    this.offset = 0;
    this.created = null;
    this.cancelled = false;
    this.terminating = null;
    this.xhr = null;
    this.stopping = new AbortController();
  }

  async start() {
    this.onState("creating");
    const response = await fetch(this.endpoint, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Tus-Resumable": TUS_VERSION,
        "Upload-Length": String(this.file.size),
        "Upload-Metadata": encodeMetadata({ filename: this.file.name, filetype: this.file.type || "application/octet-stream" }),
      },
    }).catch(() => null);
    if (!response) throw new UploadError(0, "network_error", "Colloquy cannot be reached. Check your connection.");
    const text = await response.text();
    if (!response.ok) throw await errorFrom(response.status, text, `the upload was refused (${response.status})`);
    const location = response.headers.get("Location");
    if (!location) throw new UploadError(response.status, "no_location", "the server did not say where to send the file");
    this.url = new URL(location, window.location.href).href;
    if (this.cancelled) {
      // Cancelled while the server was creating it: end what was just made.
      await this.terminate();
      throw new UploadError(0, "cancelled", "cancelled");
    }
    try {
      this.created = JSON.parse(text);
    } catch {
      this.created = null;
    }
    this.offset = parseOffset(response.headers.get("Upload-Offset")) ?? 0;
    this.onCreated(this.created);
    this.onProgress(this.offset, this.file.size);
    await this.sendAll();
  }

  async sendAll() {
    let attempt = 0;
    this.onState("uploading");
    for (;;) {
      if (this.cancelled) throw new UploadError(0, "cancelled", "cancelled");
      const chunk = planChunk(this.offset, this.file.size, this.chunkBytes);
      if (!chunk) break;
      const result = await this.patch(chunk);
      if (this.cancelled) throw new UploadError(0, "cancelled", "cancelled");
      if (result.ok) {
        this.offset = result.offset ?? chunk.end;
        if (attempt > 0) this.onState("uploading");
        attempt = 0;
        this.onProgress(this.offset, this.file.size);
        continue;
      }
      if (!retryable(result.status)) throw await errorFrom(result.status, result.text, `the upload failed (${result.status})`);
      attempt++;
      if (attempt > MAX_RECONNECTS) {
        throw new UploadError(result.status, "gave_up", `the connection kept dropping; gave up after ${MAX_RECONNECTS} attempts`);
      }
      this.onState("reconnecting", attempt);
      await sleep(backoffDelay(attempt), this.stopping.signal);
      if (this.cancelled) throw new UploadError(0, "cancelled", "cancelled");
      const head = await this.headOffset();
      if (head.gone) throw new UploadError(head.status, "upload_gone", head.message);
      if (head.offset !== null) {
        this.offset = head.offset;
        this.onProgress(this.offset, this.file.size);
      }
    }
    this.onState("finishing");
  }

  /// PATCHes one chunk with XMLHttpRequest, whose upload events give progress within it.
  patch({ start, end }) {
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      this.xhr = xhr;
      xhr.open("PATCH", this.url);
      xhr.withCredentials = true;
      xhr.setRequestHeader("Tus-Resumable", TUS_VERSION);
      xhr.setRequestHeader("Upload-Offset", String(start));
      xhr.setRequestHeader("Content-Type", "application/offset+octet-stream");
      xhr.upload.onprogress = (event) => this.onProgress(Math.min(end, start + event.loaded), this.file.size);
      const done = (ok) => {
        this.xhr = null;
        resolve({ ok, status: xhr.status, text: xhr.responseText ?? "", offset: parseOffset(xhr.getResponseHeader("Upload-Offset")) });
      };
      xhr.onload = () => done(xhr.status === 204 || xhr.status === 200);
      xhr.onerror = () => done(false);
      xhr.onabort = () => done(false);
      xhr.ontimeout = () => done(false);
      xhr.send(this.file.slice(start, end));
    });
  }

  /// The server's offset: `{offset}`, `{offset: null}` when it cannot be asked now, or
  /// `{gone, status, message}` when the upload no longer exists there.
  async headOffset() {
    try {
      const response = await fetch(this.url, { method: "HEAD", credentials: "same-origin", cache: "no-store", headers: { "Tus-Resumable": TUS_VERSION } });
      if (response.status === 404 || response.status === 410) {
        return { gone: true, status: response.status, message: response.status === 410 ? "this upload expired; start it again" : "the server no longer has this upload; start it again" };
      }
      if (!response.ok) return { offset: null };
      return { offset: parseOffset(response.headers.get("Upload-Offset")) };
    } catch {
      return { offset: null };
    }
  }

  /// Stops sending and terminates the upload on the server (its document goes with it);
  /// resolves when the server has answered. Calling it again waits for the same termination.
  cancel() {
    if (!this.terminating) {
      this.cancelled = true;
      this.stopping.abort();
      this.terminating = this.terminate();
      this.xhr?.abort();
      this.onState("cancelled");
    }
    return this.terminating;
  }

  async terminate() {
    if (!this.url) return;
    for (let tries = 1; tries <= TERMINATION_TRIES; tries++) {
      const response = await fetch(this.url, { method: "DELETE", credentials: "same-origin", headers: { "Tus-Resumable": TUS_VERSION } }).catch(() => null);
      if (response && (response.ok || response.status === 404)) return;
      // 409: a PATCH is still being closed on the server, or the upload just completed.
      if (response && response.status !== 409) return;
      await sleep(backoffDelay(tries));
    }
  }
}
