// A message named in the address (`#m-{id}`, how a search result links one): found among the
// conversation's drawn messages, scrolled to the middle of the view and marked, so the reader
// sees where the hit is. The conversation view calls it once loaded and when the address's
// fragment changes.

/// The message id `hash` names (`#m-{id}`), or null.
export function linkedMessageId(hash) {
  const match = /^#m-(.+)$/.exec(hash ?? "");
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

/// Scrolls `list` to the message `hash` names and marks it (the last mark moves); whether it
/// was there.
export function revealLinkedMessage(list, hash) {
  const id = linkedMessageId(hash);
  if (!id) return false;
  const message = [...list.querySelectorAll("article.message[data-id]")].find((el) => el.dataset.id === id);
  if (!message) return false;
  for (const old of list.querySelectorAll(".message.linked")) old.classList.remove("linked");
  message.classList.add("linked");
  message.scrollIntoView({ block: "center" });
  return true;
}
