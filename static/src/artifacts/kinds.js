// What the artifacts panel needs to know about an artifact before drawing it, as plain
// functions (tested by node): which renderer its type gets, its highlighting language, JSON
// pretty-printing, the version list, and the REST paths of a version. No DOM here.

/// The renderer for a MIME type: "markdown", "code", "json", "html", "svg", "mermaid" or
/// "text" (an unknown type is shown as text, never interpreted).
export function rendererFor(mime) {
  const type = String(mime ?? "").trim().toLowerCase().split(";")[0];
  switch (type) {
    case "text/markdown":
      return "markdown";
    case "application/json":
      return "json";
    case "text/html":
      return "html";
    case "image/svg+xml":
      return "svg";
    case "text/x-mermaid":
      return "mermaid";
    case "text/plain":
      return "code";
    default:
      return /^text\/x-[a-z0-9+#._-]+$/.test(type) ? "code" : "text";
  }
}

/// The highlight.js language of a code artifact: its `language`, else the type's
/// `text/x-{language}`, else "plaintext". Only names highlight.js could know (letters, digits,
/// `+`, `#`, `-`, `_`), so the class attribute never carries anything else.
export function languageOf(artifact) {
  const mime = String(artifact?.type ?? artifact?.mime_type ?? "").toLowerCase();
  const fromType = /^text\/x-([a-z0-9+#._-]+)$/.exec(mime)?.[1];
  const language = String(artifact?.language || fromType || "plaintext").toLowerCase();
  return /^[a-z0-9+#_-]{1,32}$/.test(language) ? language : "plaintext";
}

/// JSON indented by two spaces; `error` says why text that does not parse is shown as it is.
export function prettyJson(text) {
  try {
    return { text: JSON.stringify(JSON.parse(text), null, 2), error: null };
  } catch (err) {
    return { text: String(text ?? ""), error: `Not valid JSON: ${err.message}` };
  }
}

/// The versions a switcher offers, newest first: [{version, label}].
export function versionList(latest) {
  const count = Math.max(1, Math.floor(Number(latest) || 1));
  return Array.from({ length: count }, (_, i) => {
    const version = count - i;
    return { version, label: version === count ? `Version ${version} (latest)` : `Version ${version}` };
  });
}

/// A short name for a type, for the list: "Markdown", "Python", "JSON", "HTML", ….
export function typeLabel(mime, language) {
  const renderer = rendererFor(mime);
  const names = { markdown: "Markdown", json: "JSON", html: "HTML", svg: "SVG", mermaid: "Diagram" };
  if (names[renderer]) return names[renderer];
  if (String(mime).toLowerCase() === "text/plain") return "Text";
  if (renderer === "code") {
    const name = languageOf({ type: mime, language });
    return name.charAt(0).toUpperCase() + name.slice(1);
  }
  return String(mime || "Text");
}

/// The REST paths of one version (`latest`: the newest, whose paths need no number).
/// `base` is the chat's API path (`/chat/api/{chat}`); `key` the artifact's id or identifier.
export function artifactPaths(base, key, version, latest) {
  const root = `${base}/artifacts/${encodeURIComponent(key)}`;
  const at = version && version !== latest ? `${root}/versions/${Number(version)}` : root;
  return {
    json: at,
    raw: `${at}/raw`,
    preview: `${at}/preview`,
  };
}

/// Which artifacts a run's events brought a newer version of than `seen` (identifier → the
/// highest version seen), which is updated. The live panel opens on the last one; a replayed
/// stream (a re-attach) brings nothing newer, so it opens nothing.
export function changedArtifacts(runArtifacts, seen) {
  const changed = [];
  for (const artifact of runArtifacts ?? []) {
    const version = Number(artifact.version) || 1;
    if ((seen.get(artifact.identifier) ?? 0) >= version) continue;
    seen.set(artifact.identifier, version);
    changed.push(artifact);
  }
  return changed;
}
