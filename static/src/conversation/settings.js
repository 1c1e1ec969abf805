// The chat's settings: the Tools switch (`enableTools`), the Deep Think switch (multi-phase
// research, `x_deep_think`), which research tools to allow (`x_tools`) and the tool-iteration
// limit, kept per chat in this browser and sent with every send, edit and regenerate; and what
// happens to history that outgrows the model's context, which is the chat's own
// (`context_strategy`, kept by the server).
import { api } from "../api.js";
import { settings } from "../store.js";
import { h } from "../ui/dom.js";

const CONTEXT_STRATEGIES = [
  ["drop", "Leave out the oldest messages"],
  ["summarize", "Summarise the oldest messages"],
];

const RESEARCH_TOOLS = [
  ["web_search", "Web search"],
  ["fetch_url", "Read web pages"],
  ["code_search", "GitHub code search"],
  ["gitlab_code_search", "GitLab code search"],
  ["calculator", "Calculator"],
];

export function settingsPanel(chatId) {
  const value = settings.get(chatId);
  const toggle = h("input", { type: "checkbox", id: "tools-switch", role: "switch", checked: value.enableTools });
  const deep = h("input", { type: "checkbox", id: "deep-think-switch", role: "switch", checked: value.deepThink, "aria-describedby": "deep-think-hint" });
  const boxes = RESEARCH_TOOLS.map(([name, label]) => {
    const box = h("input", { type: "checkbox", id: `tool-${name}`, value: name, checked: value.tools.includes(name) });
    return { name, box, row: h("div", { class: "check" }, box, h("label", { for: `tool-${name}` }, label)) };
  });
  const iterations = h("input", { type: "number", id: "max-iterations", min: 1, max: 8, step: 1, value: String(value.maxIterations) });
  const toolFields = h("fieldset", { class: "tool-choices", disabled: !value.enableTools },
    h("legend", null, "Research tools to allow"),
    boxes.map((b) => b.row),
    h("div", { class: "field inline" }, h("label", { for: "max-iterations" }, "Tool rounds per answer (1–8)"), iterations));
  const save = () => {
    const rounds = Math.min(8, Math.max(1, Math.round(Number(iterations.value) || 5)));
    const next = {
      ...settings.get(chatId),
      enableTools: toggle.checked,
      deepThink: deep.checked,
      tools: boxes.filter((b) => b.box.checked).map((b) => b.name),
      maxIterations: rounds,
    };
    toolFields.disabled = !next.enableTools;
    settings.set(chatId, next);
  };
  for (const control of [toggle, deep, iterations, ...boxes.map((b) => b.box)]) control.addEventListener("change", save);
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
    h("div", { class: "switches" },
      h("div", { class: "check switch" }, toggle, h("label", { for: "tools-switch" }, "Tools"),
        h("span", { class: "muted" }, " — let the assistant search, read pages and calculate")),
      h("div", { class: "check switch" }, deep, h("label", { for: "deep-think-switch" }, "Deep Think"),
        h("span", { class: "muted", id: "deep-think-hint" }, " — plan the question, research each part, then write a report (slower; uses tools)"))),
    toolFields,
    h("div", { class: "field inline" },
      h("label", { for: "context-strategy" }, "When the conversation no longer fits the model's context"),
      strategy, strategyStatus));
  return {
    el,
    focus: () => toggle.focus(),
    /// Shows the stored chat's own setting.
    setChat: (chat) => {
      if (chat?.context_strategy) strategy.value = chat.context_strategy;
    },
  };
}
