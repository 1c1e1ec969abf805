// The agent editor: name, instructions, model (chosen from the model servers' list, as the
// chat header's picker lists it: conversation/modelpicker.js), the Tools switch, which tools
// (every one a chat turns on, or only those chosen here from the server's catalog, `GET
// /api/tools`, each with its description and what it needs; those this server lacks shown
// disabled with why; MCP servers' tools grouped by server), and the knowledge bases it
// searches. `onSaved(agent)` runs after a create or an update is stored.
import { api } from "../api.js";
import { h } from "../ui/dom.js";
import { modelLabel } from "../conversation/modelpicker.js";

const GROUPS = [
  ["research", "Research tools"],
  ["chat", "Chat tools"],
  ["platform", "Platform tools"],
  ["automation", "Workflow and schedule tools"],
];

/// The fields a save sends, from the form's values (`model`: "" for the default).
export function agentBody({ name, instructions, model, toolsOn, onlyChosen, chosen, chatToolsKept = true, knowledgeBases }) {
  return {
    name: name.trim(),
    system_prompt: instructions.trim() || null,
    model: model.trim() || null,
    tools_enabled: toolsOn,
    enabled_tools: onlyChosen ? chosen : null,
    chat_tools_enabled: chatToolsKept,
    knowledge_base_ids: knowledgeBases,
  };
}

/// The model select's options: the default, then every model the servers offer (a down
/// server's disabled), and the agent's own model when no server lists it now (so an edit keeps
/// it). Each `{value, label, disabled}`.
export function modelOptions(models, agentModel) {
  const options = [{ value: "", label: "Default model", disabled: false }];
  for (const model of models) options.push({ value: model.id, label: modelLabel(model), disabled: !model.available && model.id !== agentModel });
  if (agentModel && !models.some((m) => m.id === agentModel)) {
    options.push({ value: agentModel, label: `${agentModel} (not offered now)`, disabled: false });
  }
  return options;
}

/// A tool's line in the form: what it does, what it needs, and why it is not available here.
export function toolAbout(tool) {
  const what = tool.summary || firstSentence(tool.description);
  const needs = tool.needs ? ` Needs ${tool.needs}.` : "";
  const missing = tool.available === false ? ` Not available here: ${tool.reason ?? "not configured"}.` : "";
  return `${what}${needs}${missing}`;
}

/// Tools grouped for the form: the built-in groups, then one per MCP server.
export function groupTools(catalog) {
  const groups = GROUPS.map(([origin, label]) => ({ label, tools: catalog.filter((t) => t.origin === origin) }));
  const servers = [...new Set(catalog.filter((t) => t.origin === "mcp").map((t) => t.server_id ?? "?"))];
  for (const server of servers) {
    groups.push({ label: `MCP tools (${server})`, tools: catalog.filter((t) => t.origin === "mcp" && (t.server_id ?? "?") === server) });
  }
  return groups.filter((g) => g.tools.length > 0);
}

export function agentForm({ agent, catalog, models, knowledgeBases, onSaved, onCancel }) {
  const editing = Boolean(agent);
  const name = h("input", { id: "agent-name", maxlength: 100, required: true, autocomplete: "off", value: agent?.name ?? "" });
  const instructions = h("textarea", { id: "agent-instructions", rows: 5, maxlength: 20000 });
  instructions.value = agent?.system_prompt ?? "";
  const model = h("select", { id: "agent-model", "aria-describedby": "agent-model-hint" },
    modelOptions(models, agent?.model ?? null).map((o) => h("option", { value: o.value, disabled: o.disabled }, o.label)));
  model.value = agent?.model ?? "";
  const toolsOn = h("input", { type: "checkbox", role: "switch", id: "agent-tools-switch", checked: agent ? agent.tools_enabled : true });
  const every = h("input", { type: "radio", name: "agent-tool-choice", id: "agent-tools-every", value: "every", checked: !agent?.enabled_tools });
  const only = h("input", { type: "radio", name: "agent-tool-choice", id: "agent-tools-only", value: "only", checked: Boolean(agent?.enabled_tools) });
  const keepChat = h("input", { type: "checkbox", id: "agent-keep-chat-tools", checked: agent ? agent.chat_tools_enabled !== false : true });
  const named = new Set(agent?.enabled_tools ?? []);
  const boxes = [];
  // The tools this server lacks are listed too (with why), but cannot be named here.
  const lacks = new Set(catalog.unavailable.map((t) => t.name));
  const groups = groupTools([...catalog.tools, ...catalog.unavailable]).map((group) => h("fieldset", { class: "tool-group" },
    h("legend", null, group.label),
    group.tools.map((tool) => {
      const id = `agent-tool-${tool.name}`;
      const box = h("input", { type: "checkbox", id, value: tool.name, checked: named.has(tool.name) && !lacks.has(tool.name), "aria-describedby": `${id}-about` });
      boxes.push(box);
      return h("div", { class: "check tool-choice" }, box,
        h("label", { for: id, title: tool.description ?? "" }, tool.name),
        h("span", { class: "muted tool-about", id: `${id}-about` }, toolAbout(tool)));
    })));
  const toolList = h("div", { class: "tool-catalog" }, groups);
  const kbBoxes = knowledgeBases.map((kb) => h("input", { type: "checkbox", id: `agent-kb-${kb.id}`, value: kb.id, checked: (agent?.knowledge_base_ids ?? []).includes(kb.id) }));
  const status = h("p", { class: "muted", role: "status" });
  const save = h("button", { type: "submit", class: "primary" }, editing ? "Save agent" : "Create agent");
  const title = editing ? `Edit ${agent.name}` : "New agent";
  const form = h("form", { class: "agent-form", "aria-labelledby": "agent-form-heading" },
    h("h2", { id: "agent-form-heading" }, title),
    h("div", { class: "field" }, h("label", { for: "agent-name" }, "Name"), name),
    h("div", { class: "field" }, h("label", { for: "agent-instructions" }, "Instructions"), instructions),
    h("div", { class: "field" }, h("label", { for: "agent-model" }, "Model"), model,
      h("span", { class: "muted", id: "agent-model-hint" }, "Its chats use it unless one picks another in its header; the default is the server's.")),
    h("div", { class: "check switch" }, toolsOn, h("label", { for: "agent-tools-switch" }, "Tools"),
      h("span", { class: "muted" }, " — the agent may call tools")),
    h("fieldset", { class: "tool-mode" }, h("legend", null, "Which tools"),
      h("div", { class: "check" }, every, h("label", { for: "agent-tools-every" }, "Every tool a chat turns on")),
      h("div", { class: "check" }, only, h("label", { for: "agent-tools-only" }, "Only the tools chosen below")),
      h("div", { class: "check" }, keepChat, h("label", { for: "agent-keep-chat-tools" }, "Keep every chat's own tools"),
        h("span", { class: "muted" }, " — artifacts, memory, ask_user and file_search, chosen or not"))),
    toolList,
    h("fieldset", { class: "tool-group" }, h("legend", null, "Knowledge bases it searches"),
      knowledgeBases.length === 0 ? h("p", { class: "muted" }, "No knowledge bases yet.") : null,
      knowledgeBases.map((kb, i) => h("div", { class: "check" }, kbBoxes[i], h("label", { for: `agent-kb-${kb.id}` }, kb.name)))),
    h("div", { class: "dialog-buttons" }, h("button", { type: "button", onclick: onCancel }, "Cancel"), save),
    status);

  const sync = () => {
    const chooseOnly = toolsOn.checked && only.checked;
    every.disabled = only.disabled = !toolsOn.checked;
    keepChat.disabled = !chooseOnly;
    for (const box of boxes) box.disabled = !chooseOnly || lacks.has(box.value);
    toolList.classList.toggle("inactive", !chooseOnly);
  };
  for (const control of [toolsOn, every, only]) control.addEventListener("change", sync);
  sync();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!name.value.trim()) return name.focus();
    const body = agentBody({
      name: name.value,
      instructions: instructions.value,
      model: model.value,
      toolsOn: toolsOn.checked,
      onlyChosen: only.checked,
      chosen: boxes.filter((b) => b.checked).map((b) => b.value),
      chatToolsKept: keepChat.checked,
      knowledgeBases: kbBoxes.filter((b) => b.checked).map((b) => b.value),
    });
    save.disabled = true;
    status.textContent = "Saving…";
    try {
      const saved = editing
        ? await api("PATCH", `/api/agents/${encodeURIComponent(agent.id)}`, body)
        : await api("POST", "/api/agents", body);
      status.textContent = "Saved.";
      onSaved(saved);
    } catch (err) {
      status.textContent = `Not saved: ${err.message}`;
    } finally {
      save.disabled = false;
    }
  });
  return { el: form, focus: () => name.focus() };
}

/// A tool description's first sentence: the list stays readable; the label's title has it all.
function firstSentence(text) {
  const clean = (text ?? "").trim();
  const end = clean.search(/\.(\s|$)/);
  return end > 0 && end < 200 ? clean.slice(0, end + 1) : clean.slice(0, 200);
}
