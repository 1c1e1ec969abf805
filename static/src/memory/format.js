// What the memory panel says about a memory, and which tool events mean the model saved one.
// Pure functions: no DOM, no requests.

/// The categories the server accepts (`chat::memory::CATEGORIES`), with their labels.
export const CATEGORIES = [
  ["preference", "Preference"],
  ["fact", "Fact"],
  ["instruction", "Instruction"],
];

export function categoryLabel(category) {
  return CATEGORIES.find(([name]) => name === category)?.[1] ?? String(category ?? "");
}

/// "Saved 3 Mar 2026", or "Edited 4 Mar 2026" when it changed after it was saved.
export function dateLine(memory, locale = undefined) {
  const format = (iso) => new Date(iso).toLocaleDateString(locale, { day: "numeric", month: "short", year: "numeric" });
  const created = Date.parse(memory.created_at);
  const updated = Date.parse(memory.updated_at);
  if (Number.isFinite(updated) && Number.isFinite(created) && updated - created > 1000) return `Edited ${format(memory.updated_at)}`;
  return Number.isFinite(created) ? `Saved ${format(memory.created_at)}` : "";
}

/// Newest first, by when each was saved.
export function newestFirst(memories) {
  return [...memories].sort((a, b) => String(b.created_at ?? "").localeCompare(String(a.created_at ?? "")));
}

/// Ids of `save_memory` calls in a run's tools (`run.tools`, as `applyFrame` folds them) that
/// have finished and are not in `seen`; they are added to `seen`.
export function newSaves(tools, seen) {
  const fresh = [];
  for (const tool of tools ?? []) {
    if (tool.name === "save_memory" && tool.status === "done" && !seen.has(tool.id)) {
      seen.add(tool.id);
      fresh.push(tool.id);
    }
  }
  return fresh;
}

/// A short name for a memory in a button's accessible name ("Edit memory: I prefer tea").
export function shortText(content, max = 40) {
  const flat = String(content ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
