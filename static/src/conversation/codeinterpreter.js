// A code_interpreter call's tool card (issue 46): the Python it ran (highlighted), what it
// printed, its error, the figures it drew and the files it wrote, each a download link to
// `/v1/containers/{container}/files/{file}/content` (the session's cookie authenticates it).
// Read from the live `x_code_interpreter.output` event, or from a stored call's result (the
// JSON the model was given, which has no figures: after a reload they are the answer's own
// images). Only ids and image URLs of the expected shapes are used: a result is the model's
// to shape.
import { formatSize } from "../documents/format.js";
import { icon } from "../ui/icons.js";

export const CODE_INTERPRETER = "code_interpreter";

const CONTAINER_ID = /^cntr_[0-9a-f]{32}$/;
const FILE_ID = /^cfile_[0-9a-f]{32}$/;
const PNG_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/;
/// The note `truncate_result` ends a shortened text with (a long call's recorded arguments).
const TRUNCATED = /\n\[truncated: \d+ characters, showing the first \d+\]$/;

/// `{code, shortened}`: the code a call ran, from its arguments: an object, its JSON text, or
/// that text shortened by the run's record (then the code as far as it goes). Null without code.
export function codeOf(args) {
  if (args && typeof args === "object") return typeof args.code === "string" ? { code: args.code, shortened: false } : null;
  if (typeof args !== "string") return null;
  try {
    const parsed = JSON.parse(args);
    return typeof parsed?.code === "string" ? { code: parsed.code, shortened: false } : null;
  } catch {
    // Shortened: the JSON string's characters up to where the text was cut.
  }
  const start = /^\s*\{\s*"code"\s*:\s*"/.exec(args);
  if (!start) return null;
  const text = args.replace(TRUNCATED, "");
  let code = "";
  for (let i = start[0].length; i < text.length; i++) {
    const c = text[i];
    if (c === '"') return { code, shortened: false };
    if (c !== "\\") {
      code += c;
      continue;
    }
    const next = text[++i];
    if (next === undefined) break;
    if (next === "u") {
      const hex = text.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) break;
      code += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else {
      code += { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" }[next] ?? next;
    }
  }
  return { code, shortened: true };
}

/// What a call produced: `{logs, error, limit, files: [{name, size, url}], images}`, from the
/// live event's payload or a stored result (an object or its JSON text); null for anything
/// else (a failed call's `{error, code, suggestion}` is the tool's error, shown as such).
export function codeOutput(value) {
  let result = value;
  if (typeof value === "string") {
    try {
      result = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (!result || typeof result !== "object" || Array.isArray(result)) return null;
  if (typeof result.logs !== "string" && !Array.isArray(result.files)) return null;
  const container = typeof result.container_id === "string" && CONTAINER_ID.test(result.container_id) ? result.container_id : null;
  const files = container && Array.isArray(result.files)
    ? result.files.filter((f) => f && typeof f.file_id === "string" && FILE_ID.test(f.file_id)).map((f) => {
        const path = typeof f.path === "string" ? f.path : "";
        const name = (typeof f.filename === "string" && f.filename) || path.split("/").pop() || f.file_id;
        return {
          name,
          size: formatSize(f.bytes),
          url: `/v1/containers/${container}/files/${f.file_id}/content`,
        };
      })
    : [];
  const images = Array.isArray(result.x_images) ? result.x_images.filter((u) => typeof u === "string" && PNG_URL.test(u)) : [];
  const text = (field) => (typeof result[field] === "string" && result[field] ? result[field] : null);
  return { logs: text("logs") ?? "", error: text("error"), limit: text("limit"), files, images };
}

function codeBlock(code, shortened, h) {
  const el = h("code", { class: "language-python" }, code);
  // The markdown module's highlighter, loaded when first needed (a chunk shared with answers).
  import("../markdown/highlight.js").then(({ highlight }) => highlight(el)).catch(() => {});
  return h("figure", { class: "ci-part ci-code" },
    h("figcaption", null, shortened ? "Python code (shortened)" : "Python code"),
    h("pre", null, el));
}

/// The card: the code, then what it printed, its error, its figures and its files, shown
/// without further unfolding (as the browser card shows its page). `figures: false` leaves the
/// figures to the answer, which shows them as its own images once it is stored.
export function codeCard(tool, h, { figures = true } = {}) {
  if (tool?.name !== CODE_INTERPRETER) return null;
  const source = codeOf(tool.arguments);
  const out = tool.interpreter ?? null;
  if (!source && !out) return null;
  const count = figures ? out?.images.length ?? 0 : 0;
  return h("div", { class: "ci-card" },
    source ? codeBlock(source.code, source.shortened, h) : null,
    out && (out.logs || (!out.error && tool.status !== "failed"))
      ? h("figure", { class: "ci-part ci-output" }, h("figcaption", null, "Output"),
          h("pre", { class: "ci-logs" }, out.logs || "(nothing printed)"))
      : null,
    out?.error
      ? h("figure", { class: "ci-part ci-error" }, h("figcaption", null, icon("warning"), " Error"), h("pre", null, out.error))
      : null,
    out?.limit ? h("p", { class: "ci-limit" }, `Stopped at a limit: ${out.limit}`) : null,
    count > 0
      ? h("div", { class: "ci-figures" }, out.images.map((src, index) =>
          h("img", { src, alt: `Figure ${index + 1} of ${count} drawn by the code`, loading: "lazy" })))
      : null,
    out?.files.length > 0
      ? h("ul", { class: "ci-files", "aria-label": "Files the code wrote" }, out.files.map((file) =>
          h("li", null, h("a", { href: file.url, download: file.name, "aria-label": `Download ${file.name}${file.size ? ` (${file.size})` : ""}` },
            icon("download"), " ", file.name, file.size ? h("span", { class: "muted" }, ` (${file.size})`) : null))))
      : null);
}
