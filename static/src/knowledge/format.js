// What the knowledge bases page and the agent's knowledge choices say, as plain functions:
// a count of documents in words, the limits line, and which knowledge bases an agent names.

/// "No documents", "1 document", "12 documents".
export function documentCount(count) {
  const n = Number(count) || 0;
  if (n === 0) return "No documents";
  return `${n} document${n === 1 ? "" : "s"}`;
}

/// The limits of the list (`GET /api/knowledge-bases`'s `limits`) in one sentence, or "".
export function limitsLine(limits) {
  if (!limits?.max_knowledge_bases) return "";
  const files = limits.max_files ? `, each with up to ${limits.max_files} documents` : "";
  return `Up to ${limits.max_knowledge_bases} knowledge bases${files}.`;
}

/// The knowledge bases `agent` searches, among those listed (`bases`), in the agent's order;
/// an id the list does not have (made a moment ago elsewhere) is kept, so saving keeps it.
export function chosenIds(agent, bases) {
  const named = agent?.knowledge_base_ids ?? [];
  const known = new Set(bases.map((kb) => kb.id));
  return [...named.filter((id) => known.has(id)), ...named.filter((id) => !known.has(id))];
}

/// The ids to save when `id` is checked (`on`) or unchecked, keeping the others' order.
export function toggled(ids, id, on) {
  const rest = ids.filter((x) => x !== id);
  return on ? [...rest, id] : rest;
}
