// The artifacts panel: the chat's artifacts (title, type, latest version), and the chosen one
// at a chosen version, drawn by render.js, with Copy and Download (the `raw` endpoint). A side
// panel beside the conversation on wide screens, a drawer over it on narrow ones; a non-modal
// dialog for assistive technology. Escape or Close shuts it and focus returns to the opener.
// It owns its toolbar button (with the count) and its host; the conversation view only places
// them, says which artifact to open, and passes a run's artifacts as they change.
import { api, chatPath } from "../api.js";
import { h } from "../ui/dom.js";
import { renderArtifact } from "./render.js";
import { artifactPaths, changedArtifacts, typeLabel, versionList } from "./kinds.js";

export function artifactsPanel(chatId) {
  const base = chatPath(chatId);
  const count = h("span", { class: "artifacts-count" });
  const button = h("button", { type: "button", class: "icon-text artifacts-toggle", "aria-expanded": "false" }, "Artifacts", count);
  const host = h("div", { class: "artifacts-host" });
  const listEl = h("ul", { class: "artifacts-list", "aria-label": "Artifacts of this chat" });
  const viewEl = h("div", { class: "artifact-pane" });
  const close = h("button", { type: "button", class: "artifacts-close" }, "Close");
  const panel = h("section", { class: "artifacts-panel", id: "artifacts-panel", role: "dialog", "aria-modal": "false", "aria-labelledby": "artifacts-panel-title" },
    h("div", { class: "artifacts-head" }, h("h2", { id: "artifacts-panel-title" }, "Artifacts"), close),
    h("div", { class: "artifacts-body" }, h("nav", { class: "artifacts-nav", "aria-label": "Artifacts list" }, listEl), viewEl));

  let artifacts = [];
  let selected = null; // {key, identifier, version, latest}
  let generation = 0;
  let listGeneration = 0;
  let freeRendering = () => {};
  let opener = null;
  const seen = new Map();

  button.addEventListener("click", () => (isOpen() ? hide() : show({ focus: true })));
  close.addEventListener("click", () => hide());
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.defaultPrevented) {
      event.preventDefault();
      hide();
    }
  });

  function isOpen() {
    return panel.isConnected;
  }

  function show({ focus }) {
    if (!isOpen()) {
      host.append(panel);
      button.setAttribute("aria-expanded", "true");
      button.setAttribute("aria-controls", "artifacts-panel");
    }
    if (focus) {
      const active = document.activeElement;
      if (active && !panel.contains(active)) opener = active;
    }
    refresh();
    if (!selected) drawEmpty();
    if (focus && !selected) close.focus();
  }

  function hide() {
    if (!isOpen()) return;
    const focusWasInside = panel.contains(document.activeElement);
    freeRendering();
    freeRendering = () => {};
    panel.remove();
    button.setAttribute("aria-expanded", "false");
    button.removeAttribute("aria-controls");
    selected = null;
    generation++;
    if (focusWasInside) (opener?.isConnected ? opener : button).focus();
    opener = null;
  }

  /// Reloads the list (and the count on the button).
  async function refresh() {
    const mine = ++listGeneration;
    try {
      const body = await api("GET", `${base}/artifacts`);
      if (mine !== listGeneration) return;
      artifacts = body?.artifacts ?? [];
      drawList();
    } catch {
      // The count and the list keep what they had; opening an artifact reports its own error.
    }
  }

  function drawList() {
    count.textContent = artifacts.length > 0 ? ` (${artifacts.length})` : "";
    if (!isOpen()) return;
    if (artifacts.length === 0) {
      listEl.replaceChildren(h("li", { class: "muted" }, "No artifacts yet."));
      return;
    }
    listEl.replaceChildren(...artifacts.map((a) => {
      const current = selected && (selected.key === a.id || selected.identifier === a.identifier);
      return h("li", null, h("button", {
        type: "button",
        class: "artifact-item",
        "aria-current": current ? "true" : null,
        onclick: () => open({ artifact_id: a.id, identifier: a.identifier, title: a.title }),
      }, h("span", { class: "artifact-item-title" }, a.title || a.identifier),
      " ",
      h("span", { class: "artifact-item-meta" }, `${typeLabel(a.type, a.language)}, version ${a.version}`)));
    }));
  }

  function drawEmpty() {
    viewEl.replaceChildren(h("p", { class: "muted artifact-hint" }, "Choose an artifact to see it."));
  }

  /// Opens the panel on `ref` ({artifact_id|id, identifier, title?, version?}); `focus: false`
  /// (a run's event) leaves the reader's focus where it is.
  async function open(ref, { focus = true } = {}) {
    const key = ref.artifact_id ?? ref.id ?? ref.identifier;
    show({ focus });
    const mine = ++generation;
    selected = { key, identifier: ref.identifier, version: ref.version ?? null, latest: null };
    const heading = h("h3", { class: "artifact-title", id: "artifact-panel-heading", tabindex: "-1" }, ref.title || ref.identifier || "Artifact");
    const stage = h("div", { class: "artifact-stage" }, h("p", { class: "muted", role: "status" }, "Loading…"));
    viewEl.replaceChildren(h("section", { class: "artifact-open", "aria-labelledby": "artifact-panel-heading" }, heading, stage));
    drawList();
    if (focus) heading.focus();
    try {
      const latest = await api("GET", artifactPaths(base, key).json);
      let shown = latest;
      const wanted = Number(ref.version) || null;
      if (wanted && wanted !== latest.version) {
        shown = await api("GET", artifactPaths(base, latest.id, wanted, latest.version).json);
      }
      if (mine !== generation) return;
      selected = { key: latest.id, identifier: latest.identifier, version: shown.version, latest: latest.version };
      drawArtifact(heading, stage, { ...latest, ...shown, latest_version: latest.version });
      drawList();
    } catch (err) {
      if (mine !== generation) return;
      stage.replaceChildren(h("p", { class: "run-error", role: "alert" }, `Could not open the artifact: ${err.message}`));
    }
  }

  async function switchVersion(version, heading, stage) {
    const mine = ++generation;
    const { key, latest } = selected;
    try {
      const shown = await api("GET", artifactPaths(base, key, version, latest).json);
      if (mine !== generation) return;
      selected = { ...selected, version: shown.version };
      drawArtifact(heading, stage, { ...shown, latest_version: latest }, true);
    } catch (err) {
      if (mine !== generation) return;
      stage.replaceChildren(h("p", { class: "run-error", role: "alert" }, `Could not open version ${version}: ${err.message}`));
    }
  }

  /// The open artifact's controls and content; `keepFocus`: the version switcher stays focused.
  function drawArtifact(heading, stage, artifact, keepFocus = false) {
    heading.textContent = artifact.title || artifact.identifier;
    const paths = artifactPaths(base, artifact.id, artifact.version, artifact.latest_version);
    const select = h("select", { id: "artifact-version", class: "artifact-version" },
      versionList(artifact.latest_version).map((v) => h("option", { value: String(v.version), selected: v.version === artifact.version }, v.label)));
    select.addEventListener("change", () => switchVersion(Number(select.value), heading, stage));
    const status = h("span", { class: "artifact-status", role: "status" });
    const copy = h("button", { type: "button", class: "artifact-copy" }, "Copy");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(artifact.content ?? "");
        status.textContent = "Copied.";
      } catch {
        status.textContent = "Copying failed.";
      }
      setTimeout(() => (status.textContent = ""), 2000);
    });
    const download = h("a", { class: "artifact-download", href: paths.raw, download: true }, "Download");
    const view = h("div", { class: "artifact-view-body" });
    const tools = h("div", { class: "artifact-tools" },
      h("label", { for: "artifact-version" }, "Version"), select, copy, download, status);
    const meta = h("p", { class: "artifact-meta muted" }, `${typeLabel(artifact.type, artifact.language)} · ${artifact.identifier}`);
    freeRendering();
    const focused = keepFocus && document.activeElement;
    stage.replaceChildren(meta, tools, view);
    freeRendering = renderArtifact(view, artifact, paths.preview);
    if (focused) select.focus();
  }

  /// A run's artifacts, after each `x_artifact.*` event: the panel opens on the one that
  /// changed (or shows its new version), without moving focus.
  function live(runArtifacts) {
    const changed = changedArtifacts(runArtifacts, seen);
    if (changed.length === 0) return;
    const last = changed[changed.length - 1];
    open({ identifier: last.identifier, title: last.title }, { focus: false });
  }

  return {
    button,
    el: host,
    open,
    refresh,
    live,
    close: hide,
    destroy() {
      generation++;
      freeRendering();
    },
  };
}
