// The workflow editor: a name, a description and the steps in order — each a tool call (the
// tool picked from `GET /api/workflow-tools`, its arguments a form drawn from the tool's JSON
// Schema: `schemaform.js`) or a prompt — added, removed and moved up or down. Saved with
// `POST /api/workflows` or, for an existing one, `PATCH /api/workflows/{id}` (a new version),
// with the API's own field names (`{id, tool, arguments}` or `{id, prompt}`). The server's
// refusal is shown beside the Save button and nothing typed is lost.
import { api } from "../api.js";
import { h } from "../ui/dom.js";
import { schemaForm } from "./schemaform.js";

/// Steps a workflow may have (the server's `MAX_STEPS`).
const MAX_STEPS = 20;

let forms = 0;
let editors = 0;

/// `{el, focus}` for `workflow` (null: a new one); `tools` as `/api/workflow-tools` lists them.
export function workflowForm({ workflow, tools, onSaved, onCancel }) {
  const prefix = `wf${++forms}`;
  const name = h("input", { id: `${prefix}-name`, value: workflow?.name ?? "", maxlength: 200, autocomplete: "off", "aria-required": "true" });
  const description = h("textarea", { id: `${prefix}-description`, rows: 2, maxlength: 2000, value: workflow?.description ?? "" });
  const stepList = h("ol", { class: "step-list", "aria-label": "Steps" });
  const refusal = h("p", { class: "doc-refusal", role: "alert" });
  const status = h("p", { class: "muted", role: "status" });
  const addTool = h("button", { type: "button" }, "Add a tool step");
  const addPrompt = h("button", { type: "button" }, "Add a prompt step");
  const save = h("button", { type: "submit", class: "primary" }, workflow ? "Save changes" : "Create workflow");
  const heading = workflow ? `Edit the workflow ${workflow.name}` : "New workflow";
  const el = h("form", { class: "automation-form", "aria-label": heading, novalidate: true },
    h("h3", {}, heading),
    h("div", { class: "field" }, h("label", { for: name.id }, "Name", h("span", { class: "required" }, " (required)")), name),
    h("div", { class: "field" }, h("label", { for: description.id }, "Description"), description),
    h("fieldset", { class: "steps" },
      h("legend", {}, "Steps, run in order"),
      h("p", { class: "muted field-hint" },
        "A step's text may use {{input.name}} (the run's input) and {{steps.<id>.result}} (an earlier step's result)."),
      stepList,
      h("div", { class: "form-actions" }, addTool, addPrompt)),
    h("div", { class: "form-actions" }, save, h("button", { type: "button", onclick: onCancel }, "Cancel")),
    refusal, status);

  const steps = [];
  let counter = 0;

  function freshId() {
    let id;
    do id = `step-${++counter}`; while (steps.some((s) => s.idInput.value === id));
    return id;
  }

  function add(spec, focus = true) {
    if (steps.length >= MAX_STEPS) {
      refusal.textContent = `A workflow has at most ${MAX_STEPS} steps.`;
      return;
    }
    const step = stepEditor(spec, tools, `${prefix}-s${++editors}`, {
      up: () => move(step, -1),
      down: () => move(step, 1),
      remove: () => {
        steps.splice(steps.indexOf(step), 1);
        redraw();
        (steps[0]?.focus ?? (() => addTool.focus()))();
      },
    });
    steps.push(step);
    redraw();
    if (focus) step.focus();
  }

  function move(step, by) {
    const at = steps.indexOf(step);
    const to = at + by;
    if (to < 0 || to >= steps.length) return;
    steps.splice(at, 1);
    steps.splice(to, 0, step);
    redraw();
    step.focusMove(by);
  }

  function redraw() {
    steps.forEach((step, at) => step.place(at, steps.length));
    stepList.replaceChildren(...steps.map((step) => step.el));
    addTool.disabled = addPrompt.disabled = steps.length >= MAX_STEPS;
  }

  for (const spec of workflow?.steps ?? []) add(spec, false);
  counter = steps.length;
  addTool.addEventListener("click", () => add({ id: freshId(), tool: tools[0]?.name ?? "", arguments: {} }));
  addPrompt.addEventListener("click", () => add({ id: freshId(), prompt: "" }));

  // A message about an earlier attempt goes once the form is changed.
  el.addEventListener("input", () => {
    refusal.textContent = "";
  });

  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    refusal.textContent = "";
    status.textContent = "";
    const title = name.value.trim();
    if (!title) {
      name.setAttribute("aria-invalid", "true");
      refusal.textContent = "Give the workflow a name.";
      name.focus();
      return;
    }
    name.removeAttribute("aria-invalid");
    if (steps.length === 0) {
      refusal.textContent = "Add at least one step.";
      addTool.focus();
      return;
    }
    const specs = [];
    for (const step of steps) {
      const read = step.read();
      if (read.error) {
        refusal.textContent = `${read.label}: ${read.error}`;
        return;
      }
      specs.push(read.spec);
    }
    const body = { name: title, description: description.value.trim() || null, steps: specs };
    save.disabled = true;
    status.textContent = "Saving…";
    try {
      const saved = workflow
        ? await api("PATCH", `/api/workflows/${encodeURIComponent(workflow.id)}`, body)
        : await api("POST", "/api/workflows", body);
      status.textContent = "";
      onSaved(saved);
    } catch (err) {
      status.textContent = "";
      refusal.textContent = `Not saved: ${err.message}`;
      refusal.scrollIntoView({ block: "nearest" });
    } finally {
      save.disabled = false;
    }
  });

  return { el, focus: () => name.focus() };
}

/// One step: its id, its kind (tool call or prompt) and what that kind needs, with the buttons
/// that move and remove it. `place(at, count)` numbers it.
function stepEditor(spec, tools, prefix, actions) {
  const idInput = h("input", { id: `${prefix}-id`, value: spec.id ?? "", maxlength: 64, autocomplete: "off", class: "step-id", "aria-describedby": `${prefix}-id-hint` });
  const kind = h("select", { id: `${prefix}-kind` },
    h("option", { value: "tool", selected: spec.prompt === undefined }, "Tool call"),
    h("option", { value: "prompt", selected: spec.prompt !== undefined }, "Prompt"));
  const body = h("div", { class: "step-body" });
  const legend = h("legend", {});
  const up = h("button", { type: "button", onclick: actions.up }, "Up");
  const down = h("button", { type: "button", onclick: actions.down }, "Down");
  const remove = h("button", { type: "button", class: "danger", onclick: actions.remove }, "Remove");
  const fieldset = h("fieldset", { class: "step" },
    legend,
    h("div", { class: "step-head" },
      h("div", { class: "field" }, h("label", { for: idInput.id }, "Step id"), idInput,
        h("p", { class: "muted field-hint", id: `${prefix}-id-hint` }, "Lowercase letters, digits, - and _.")),
      h("div", { class: "field" }, h("label", { for: kind.id }, "Kind"), kind)),
    body,
    h("div", { class: "form-actions" }, up, down, remove));
  const el = h("li", {}, fieldset);

  let current = null;
  let number = 1;
  let last = spec;

  function drawTool(toolName, values) {
    const known = tools.find((tool) => tool.name === toolName);
    const choices = known || !toolName ? tools : [...tools, { name: toolName, description: "Not offered by this server now." }];
    const picker = h("select", { id: `${prefix}-tool` },
      choices.map((tool) => h("option", { value: tool.name, selected: tool.name === toolName }, tool.name)));
    const about = h("p", { class: "muted field-hint", id: `${prefix}-tool-about` });
    const argumentsBox = h("div", { class: "step-arguments" });
    picker.setAttribute("aria-describedby", about.id);
    let form = null;
    const pick = (name, args) => {
      const tool = choices.find((t) => t.name === name);
      about.textContent = tool?.description ?? "";
      form = schemaForm({ schema: tool?.parameters, values: args, idPrefix: `${prefix}-arg` });
      argumentsBox.replaceChildren(form.el);
    };
    pick(picker.value, values);
    picker.addEventListener("change", () => pick(picker.value, {}));
    body.replaceChildren(h("div", { class: "field" }, h("label", { for: picker.id }, "Tool"), picker, about), argumentsBox);
    current = {
      focus: () => picker.focus(),
      read() {
        if (!picker.value) return { error: "choose a tool." };
        const args = form.read();
        if (args.error) return { error: args.error };
        return { spec: { tool: picker.value, arguments: args.value } };
      },
    };
  }

  function drawPrompt(text) {
    const prompt = h("textarea", { id: `${prefix}-prompt`, rows: 3, maxlength: 20000, value: text ?? "", "aria-required": "true" });
    body.replaceChildren(h("div", { class: "field" }, h("label", { for: prompt.id }, "Prompt", h("span", { class: "required" }, " (required)")), prompt));
    current = {
      focus: () => prompt.focus(),
      read() {
        if (!prompt.value.trim()) {
          prompt.setAttribute("aria-invalid", "true");
          prompt.focus();
          return { error: "the prompt is empty." };
        }
        prompt.removeAttribute("aria-invalid");
        return { spec: { prompt: prompt.value } };
      },
    };
  }

  const draw = () => (kind.value === "prompt" ? drawPrompt(last.prompt) : drawTool(last.tool ?? tools[0]?.name ?? "", last.arguments ?? {}));
  draw();
  kind.addEventListener("change", () => {
    last = {};
    draw();
  });

  return {
    el,
    idInput,
    focus: () => current.focus(),
    // Focus follows the moved step (its other button when it reached an end).
    focusMove(by) {
      const button = by < 0 ? up : down;
      (button.disabled ? (by < 0 ? down : up) : button).focus();
    },
    place(at, count) {
      number = at + 1;
      legend.textContent = `Step ${number}`;
      up.disabled = at === 0;
      down.disabled = at === count - 1;
      up.setAttribute("aria-label", `Move step ${number} up`);
      down.setAttribute("aria-label", `Move step ${number} down`);
      remove.setAttribute("aria-label", `Remove step ${number}`);
    },
    read() {
      const label = `Step ${number}`;
      const id = idInput.value.trim();
      if (!/^[a-z0-9_-]{1,64}$/.test(id)) {
        idInput.setAttribute("aria-invalid", "true");
        idInput.focus();
        return { label, error: "its id must be 1 to 64 lowercase letters, digits, - or _." };
      }
      idInput.removeAttribute("aria-invalid");
      const read = current.read();
      if (read.error) return { label, error: read.error };
      return { spec: { id, ...read.spec } };
    },
  };
}
