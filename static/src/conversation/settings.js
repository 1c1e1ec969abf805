// The chat's settings: the Tools switch (`enableTools`), the Deep Think switch (multi-phase
// research, `x_deep_think`), which opt-in tools to turn on (`x_tools`: the research tools, the
// browser, the code interpreter; optin.js says which can be) and the tool-iteration limit,
// kept per chat in this browser and sent with every send, edit and regenerate; and what
// happens to history that outgrows the model's context, and the chat's agent (agent.js),
// which are the chat's own (kept by the server), with the knowledge bases that agent searches
// (knowledge/attach.js, saved on the agent). What the agent allows and what the server has
// bound the Tools switch and the opt-in tools: those it cannot have cannot be chosen.
import { api } from "../api.js";
import { settings } from "../store.js";
import { h } from "../ui/dom.js";
import { agentPicker } from "./agent.js";
import { optInChoices } from "./optin.js";
import { agentKnowledge } from "../knowledge/attach.js";
import { chatExportLinks } from "../settings/transfer.js";

const CONTEXT_STRATEGIES = [
  ["drop", "Leave out the oldest messages"],
  ["summarize", "Summarise the oldest messages"],
];

export function settingsPanel(chatId) {
  const value = settings.get(chatId);
  const toggle = h("input", { type: "checkbox", id: "tools-switch", role: "switch", checked: settings.toolsOn(value), "aria-describedby": "tools-hint" });
  const deep = h("input", { type: "checkbox", id: "deep-think-switch", role: "switch", checked: value.deepThink, "aria-describedby": "deep-think-hint" });
  // One row per opt-in tool: drawn at once from the known names, then described (and
  // disabled with why) once the catalog and the agent's tools are known.
  let catalog = null;
  let allowed = null;
  const boxes = [];
  const choiceList = h("div", { class: "opt-in-tools" });
  function row(name, label) {
    let b = boxes.find((x) => x.name === name);
    if (b) return b;
    const box = h("input", { type: "checkbox", id: `tool-${name}`, value: name, checked: value.tools.includes(name) });
    const about = h("span", { class: "muted tool-about", id: `tool-${name}-about` });
    const note = h("span", { class: "muted tool-about", id: `tool-${name}-note`, hidden: true });
    b = { name, box, about, note, row: h("div", { class: "check tool-choice" }, box, h("label", { for: `tool-${name}` }, label), about, note) };
    box.addEventListener("change", save);
    boxes.push(b);
    choiceList.append(b.row);
    return b;
  }
  function drawChoices() {
    const choices = optInChoices(catalog, allowed);
    for (const b of boxes) b.row.hidden = !choices.some((c) => c.name === b.name);
    for (const choice of choices) {
      const b = row(choice.name, choice.label);
      const why = !choice.available ? `Not available here: ${choice.reason}.` : choice.allowed ? "" : "(this agent does not allow it)";
      b.box.disabled = Boolean(why);
      b.box.checked = !why && settings.get(chatId).tools.includes(choice.name);
      b.about.textContent = choice.about;
      b.about.hidden = !choice.about;
      b.note.textContent = why;
      b.note.hidden = !why;
      const describedBy = [choice.about ? b.about.id : null, why ? b.note.id : null].filter(Boolean).join(" ");
      if (describedBy) b.box.setAttribute("aria-describedby", describedBy);
      else b.box.removeAttribute("aria-describedby");
    }
  }
  const iterations = h("input", { type: "number", id: "max-iterations", min: 1, max: 8, step: 1, value: String(value.maxIterations) });
  const toolFields = h("fieldset", { class: "tool-choices", disabled: !toggle.checked },
    h("legend", null, "Opt-in tools"),
    choiceList,
    h("div", { class: "field inline" }, h("label", { for: "max-iterations" }, "Tool rounds per answer (1–8)"), iterations));
  const save = () => {
    const stored = settings.get(chatId);
    const rounds = Math.min(8, Math.max(1, Math.round(Number(iterations.value) || 5)));
    const next = {
      ...stored,
      enableTools: toggle.checked,
      deepThink: deep.checked,
      // A tool this agent or server does not allow shows unchecked but stays chosen (for other
      // agents, or once the server has it).
      tools: boxes.filter((b) => (b.box.disabled ? stored.tools.includes(b.name) : b.box.checked)).map((b) => b.name),
      maxIterations: rounds,
    };
    toolFields.disabled = !next.enableTools;
    settings.set(chatId, next);
  };
  for (const control of [toggle, deep, iterations]) control.addEventListener("change", save);
  drawChoices();
  api("GET", "/api/tools").then((listed) => {
    catalog = listed;
    drawChoices();
  }).catch(() => {
    // Not described: the known tools stay, as the server still decides what a run gets.
  });
  // The agent's knowledge bases, saved on the agent; its tools change with them.
  const knowledge = agentKnowledge({ onSaved: (saved) => agent.replaceAgent(saved) });
  // The agent's tools: the switch shows its default until the reader sets it, and an opt-in
  // tool it does not allow is disabled, with a note saying why.
  const agent = agentPicker(chatId, {
    onChange: (chosen, names) => {
      knowledge.setAgent(chosen);
      allowed = names;
      toggle.checked = settings.toolsOn(settings.get(chatId), chosen);
      toggle.disabled = names !== null && names.length === 0;
      toolFields.disabled = !toggle.checked || toggle.disabled;
      drawChoices();
    },
  });
  const strategy = h("select", { id: "context-strategy" },
    CONTEXT_STRATEGIES.map(([name, label]) => h("option", { value: name }, label)));
  strategy.value = value.contextStrategy ?? "drop";
  const strategyStatus = h("span", { class: "muted", role: "status" });
  strategy.addEventListener("change", async () => {
    const chosen = strategy.value;
    if (!chatId) {
      // A chat not created yet: it is created with this choice.
      settings.set(chatId, { ...settings.get(chatId), contextStrategy: chosen });
      return;
    }
    strategyStatus.textContent = "Saving…";
    try {
      const saved = await api("PATCH", `/chat/api/chats/${encodeURIComponent(chatId)}`, { context_strategy: chosen });
      strategy.value = saved.context_strategy;
      strategyStatus.textContent = "Saved.";
    } catch (err) {
      strategyStatus.textContent = `Not saved: ${err.message}`;
    }
  });
  const el = h("section", { id: "chat-settings", class: "settings", "aria-label": "Chat settings" },
    agent.field,
    h("div", { class: "switches" },
      h("div", { class: "check switch" }, toggle, h("label", { for: "tools-switch" }, "Tools"),
        h("span", { class: "muted", id: "tools-hint" }, " — let the assistant search, read pages and calculate")),
      h("div", { class: "check switch" }, deep, h("label", { for: "deep-think-switch" }, "Deep Think"),
        h("span", { class: "muted", id: "deep-think-hint" }, " — plan the question, research each part, then write a report (slower; uses tools)"))),
    agent.list,
    knowledge.el,
    toolFields,
    h("div", { class: "field inline" },
      h("label", { for: "context-strategy" }, "When the conversation no longer fits the model's context"),
      strategy, strategyStatus),
    chatId ? chatExportLinks(chatId) : null);
  return {
    el,
    focus: () => (toggle.disabled ? agent.field.querySelector("select") : toggle).focus(),
    /// The chat's agent, once known: what a send's tool fields depend on.
    agent: () => agent.agent(),
    /// The header's badge naming it (agent.js).
    badge: agent.badge,
    /// Shows the stored chat's own settings.
    setChat: (chat) => {
      if (chat?.context_strategy) strategy.value = chat.context_strategy;
      agent.setChat(chat);
    },
  };
}
