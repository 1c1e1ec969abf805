// The chat API, as any client sees it: JSON requests with the session cookie, errors as
// `ApiError` (status, stable code, message). A 401 anywhere means the session ended: the app
// shows the sign-in page and keeps what the user was typing.

export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

let signedOut = () => {};

/// Called whenever the server says the session is gone.
export function onSignedOut(handler) {
  signedOut = handler;
}

async function errorOf(response) {
  let code = `http_${response.status}`;
  let message = response.statusText || "Request failed";
  try {
    const body = await response.json();
    if (body?.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch {
    // Not JSON: a proxy's page, say. Keep the status line.
  }
  const retry = Number(response.headers.get("retry-after"));
  return new ApiError(response.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : null);
}

async function send(method, path, body, init = {}) {
  let response;
  // A FormData body (an upload) goes as multipart, with the boundary the browser chooses.
  const form = typeof FormData !== "undefined" && body instanceof FormData;
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined || form ? init.headers : { "content-type": "application/json", ...init.headers },
      body: body === undefined || form ? body : JSON.stringify(body),
      signal: init.signal,
    });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "Colloquy cannot be reached. Check your connection.");
  }
  if (response.status === 401 && !init.quiet401) {
    signedOut();
  }
  if (!response.ok) throw await errorOf(response);
  return response;
}

/// A JSON request (or, with a `FormData` body, a multipart upload); resolves to the parsed
/// body (or null for an empty one).
export async function api(method, path, body, init) {
  const response = await send(method, path, body, init);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/// A request whose answer is an SSE stream: resolves to the open Response.
export function stream(method, path, body, init) {
  return send(method, path, body, init);
}

export const chatPath = (chatId, rest = "") => `/chat/api/${encodeURIComponent(chatId)}${rest}`;
