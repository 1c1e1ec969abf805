// The knowledge bases the chat's agent searches, in the chat's settings: a checkbox per
// knowledge base of the reader's, checked when the agent names it. A change is saved on the
// agent at once (`PATCH /api/agents/{id}` with `knowledge_base_ids`), so it holds for every
// chat of that agent; `onSaved(agent)` then lets the agent picker show the agent's new tools.
import { api } from "../api.js";
import { h } from "../ui/dom.js";
import { chosenIds, toggled } from "./format.js";

export function agentKnowledge({ onSaved = () => {} } = {}) {
  let agent = null;
  let bases = null;
  let failed = null;

  const choices = h("div", { class: "kb-choices" });
  const status = h("span", { class: "muted", role: "status" });
  const el = h("fieldset", { class: "knowledge-choices" },
    h("legend", null, "Knowledge bases this agent searches (in all its chats)"), choices, status);

  function draw() {
    if (failed) return choices.replaceChildren(h("p", { class: "muted" }, `Could not be loaded: ${failed}`));
    if (!bases) return choices.replaceChildren(h("p", { class: "muted" }, "Loading…"));
    if (bases.length === 0) {
      return choices.replaceChildren(h("p", { class: "muted" }, "No knowledge bases yet: ",
        h("a", { href: "/knowledge" }, "create one"), ", then choose it here."));
    }
    const chosen = chosenIds(agent, bases);
    choices.replaceChildren(...bases.map((kb) => {
      const id = `kb-choice-${kb.id}`;
      const box = h("input", { type: "checkbox", id, value: kb.id, checked: chosen.includes(kb.id), disabled: !agent });
      box.addEventListener("change", () => save(toggled(chosenIds(agent, bases), kb.id, box.checked)));
      return h("div", { class: "check" }, box, h("label", { for: id }, kb.name));
    }));
  }

  async function save(ids) {
    if (!agent) return;
    status.textContent = "Saving…";
    try {
      agent = await api("PATCH", `/api/agents/${encodeURIComponent(agent.id)}`, { knowledge_base_ids: ids });
      status.textContent = "Saved.";
      onSaved(agent);
    } catch (err) {
      status.textContent = `Not saved: ${err.message}`;
    }
    draw();
  }

  api("GET", "/api/knowledge-bases").then((body) => {
    bases = body.knowledge_bases ?? [];
    draw();
  }).catch((err) => {
    failed = err.message;
    draw();
  });
  draw();

  return {
    el,
    /// Shows the knowledge bases of `chosen` (the chat's agent; null until known).
    setAgent(chosen) {
      if (chosen?.id !== agent?.id) status.textContent = "";
      agent = chosen;
      draw();
    },
  };
}
