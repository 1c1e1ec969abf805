// The automations page (`/automations`): the reader's schedules and workflows, made and changed
// here. A schedule shows its timing in words (and its cron expression and zone), its next
// firing, its last outcome and recent firings (each linked to the chat it ran in), with Edit,
// Pause or Resume, Delete (after a confirmation) and the link to its chat; the page re-reads
// the schedules when one is due, so a firing's outcome appears without a reload. A workflow
// shows its steps in order, with Edit, Run (in a new chat; its outcome and chat shown here) and
// Delete. The editors are `scheduleform.js` and `workflowform.js`; `format.js` words things.
import { api, stream } from "../api.js";
import { readFrames } from "../sse.js";
import { navigate } from "../router.js";
import { store } from "../store.js";
import { h } from "../ui/dom.js";
import { confirmDialog } from "../ui/dialog.js";
import { menuButton } from "../ui/header.js";
import { stepLine, outcomeLine, zonedTime, firingLine } from "./format.js";
import { workflowForm } from "./workflowform.js";
import { scheduleForm } from "./scheduleform.js";

/// The soonest the page re-reads its schedules after one was due (a firing takes a moment to
/// start and to end), and between two re-reads.
const REFRESH_AFTER_DUE_MS = 1500;
/// Workflows whose last run is looked up when the list is drawn.
const RUNS_LOOKED_UP = 20;
/// Recent firings listed under a schedule (the API gives up to ten).
const SHOWN_FIRINGS = 5;

export function automationsView({ onMenu }) {
  let destroyed = false;
  let workflowList = [];
  let tools = [];
  let accountZone = "UTC";
  let refreshTimer = null;
  let openForm = null;
  // Schedule lists asked for: an answer older than the latest is not drawn.
  let scheduleReads = 0;

  const refusal = h("p", { class: "doc-refusal", role: "alert" });
  const workflows = h("ul", { class: "automation-list", "aria-label": "Your workflows" });
  const noWorkflows = h("p", { class: "muted", hidden: true }, "No workflows yet.");
  const schedules = h("ul", { class: "automation-list", "aria-label": "Your schedules" });
  const noSchedules = h("p", { class: "muted", hidden: true }, "No schedules yet.");
  const scheduleEditor = h("div", { class: "automation-editor" });
  const workflowEditor = h("div", { class: "automation-editor" });
  const newSchedule = h("button", { type: "button", class: "primary", onclick: () => editSchedule(null) }, "New schedule");
  const newWorkflow = h("button", { type: "button", class: "primary", onclick: () => editWorkflow(null) }, "New workflow");
  const el = h("main", { class: "automations-page", "aria-labelledby": "automations-heading" },
    h("header", { class: "chat-header" },
      menuButton(onMenu),
      h("h1", { id: "automations-heading", class: "chat-heading" }, "Automations")),
    h("div", { class: "automations-body" },
      refusal,
      h("section", { class: "automation-section", "aria-labelledby": "schedules-heading" },
        h("div", { class: "section-head" }, h("h2", { id: "schedules-heading" }, "Schedules"), newSchedule),
        h("p", { class: "muted kb-intro" },
          "A schedule fires a workflow or a prompt at the times its cron expression says. Each firing is a run in the schedule's chat."),
        scheduleEditor, schedules, noSchedules),
      h("section", { class: "automation-section", "aria-labelledby": "workflows-heading" },
        h("div", { class: "section-head" }, h("h2", { id: "workflows-heading" }, "Workflows"), newWorkflow),
        h("p", { class: "muted kb-intro" },
          "Recipes of tool calls and prompts, run here, by an agent (execute_workflow) or on a schedule."),
        workflowEditor, workflows, noWorkflows)));
  document.title = "Automations · Colloquy";

  function closeForms() {
    openForm?.destroy?.();
    openForm = null;
    scheduleEditor.replaceChildren();
    workflowEditor.replaceChildren();
  }

  async function editWorkflow(workflow) {
    await ready;
    if (destroyed) return;
    closeForms();
    const form = workflowForm({
      workflow, tools,
      onSaved: (saved) => {
        closeForms();
        refusal.textContent = "";
        load().then(() => workflows.querySelector(`[data-id="${CSS.escape(saved.id)}"] h3`)?.focus());
      },
      onCancel: () => {
        closeForms();
        (workflow ? workflows.querySelector(`[data-id="${CSS.escape(workflow.id)}"] h3`) : newWorkflow)?.focus();
      },
    });
    openForm = form;
    workflowEditor.replaceChildren(form.el);
    form.el.scrollIntoView({ block: "nearest" });
    form.focus();
  }

  async function editSchedule(schedule) {
    const [chats] = await Promise.all([
      api("GET", "/chat/api/chats?limit=200").then((page) => page.data ?? []).catch(() => store.get().chats ?? []),
      ready,
    ]);
    if (destroyed) return;
    closeForms();
    const form = scheduleForm({
      schedule, workflows: workflowList, chats, accountZone,
      onSaved: (saved) => {
        closeForms();
        refusal.textContent = "";
        load().then(() => schedules.querySelector(`[data-id="${CSS.escape(saved.id)}"] h3`)?.focus());
      },
      onCancel: () => {
        closeForms();
        (schedule ? schedules.querySelector(`[data-id="${CSS.escape(schedule.id)}"] h3`) : newSchedule)?.focus();
      },
    });
    openForm = form;
    scheduleEditor.replaceChildren(form.el);
    form.el.scrollIntoView({ block: "nearest" });
    form.focus();
  }

  function chatLink(chatId, text, label) {
    const path = `/c/${encodeURIComponent(chatId)}`;
    return h("a", { href: path, "aria-label": label, onclick: (event) => { event.preventDefault(); navigate(path); } }, text);
  }

  function drawWorkflows(list) {
    noWorkflows.hidden = list.length > 0;
    workflows.replaceChildren(...list.map((workflow) => {
      const needsInput = JSON.stringify(workflow.steps).includes("{{input.");
      const inputId = `run-input-${workflow.id}`;
      const input = needsInput
        ? h("textarea", { id: inputId, rows: 2, class: "mono", spellcheck: "false" })
        : null;
      const outcome = h("p", { class: "run-outcome", role: "status" });
      const runButton = h("button", { type: "button", "aria-label": `Run ${workflow.name}` }, "Run");
      runButton.addEventListener("click", () => run(workflow, input, runButton, outcome));
      const item = h("li", { "aria-label": workflow.name, dataset: { id: workflow.id } },
        h("h3", { tabindex: "-1" }, workflow.name, " ", h("span", { class: "muted" }, `version ${workflow.version}`)),
        workflow.description ? h("p", { class: "muted" }, workflow.description) : null,
        h("ol", { "aria-label": `Steps of ${workflow.name}` },
          ...workflow.steps.map((step) => h("li", {}, stepLine(step)))),
        input ? h("div", { class: "field" }, h("label", { for: inputId }, "Input for a run (a JSON object)"), input) : null,
        h("div", { class: "form-actions" },
          h("button", { type: "button", "aria-label": `Edit ${workflow.name}`, onclick: () => editWorkflow(workflow) }, "Edit"),
          runButton,
          h("button", {
            type: "button", class: "danger", "aria-label": `Delete ${workflow.name}`,
            onclick: async () => {
              const sure = await confirmDialog({
                title: `Delete the workflow “${workflow.name}”?`,
                body: "Its past runs stay in their chats. A workflow a schedule fires cannot be deleted.",
                confirm: "Delete",
              });
              if (sure) act(`/api/workflows/${encodeURIComponent(workflow.id)}`, "DELETE");
            },
          }, "Delete")),
        outcome);
      return item;
    }));
    for (const workflow of list.slice(0, RUNS_LOOKED_UP)) showLastRun(workflow);
  }

  function outcomeOf(workflow) {
    return workflows.querySelector(`[data-id="${CSS.escape(workflow.id)}"] .run-outcome`);
  }

  async function showLastRun(workflow, outcome = outcomeOf(workflow)) {
    try {
      const { runs } = await api("GET", `/api/workflows/${encodeURIComponent(workflow.id)}/runs`);
      const last = runs?.[0];
      if (destroyed || !last || !outcome) return;
      const words = last.status === "failed"
        ? `Last run: failed${last.failed_step ? ` at step ${last.failed_step}` : ""}${last.error ? `: ${last.error}` : ""}`
        : `Last run: ${last.status}`;
      outcome.replaceChildren(words, last.chat_id ? " · " : "",
        last.chat_id ? chatLink(last.chat_id, "Open the chat", `Open the chat of the last run of ${workflow.name}`) : "");
    } catch {
      // The list stands without it.
    }
  }

  async function run(workflow, input, button, outcome) {
    let body = {};
    if (input && input.value.trim()) {
      try {
        body = { input: JSON.parse(input.value) };
      } catch {
        outcome.textContent = "The input must be a JSON object.";
        input.setAttribute("aria-invalid", "true");
        input.focus();
        return;
      }
      input.removeAttribute("aria-invalid");
    }
    button.disabled = true;
    outcome.textContent = `Running ${workflow.name}…`;
    try {
      const response = await stream("POST", `/api/workflows/${encodeURIComponent(workflow.id)}/runs`, body);
      await readFrames(response, () => {});
      await showLastRun(workflow, outcome);
    } catch (err) {
      outcome.textContent = `Not run: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  }

  function drawSchedules(list) {
    noSchedules.hidden = list.length > 0;
    const names = new Map(workflowList.map((w) => [w.id, w.name]));
    schedules.replaceChildren(...list.map((schedule) => {
      const paused = schedule.status === "paused";
      const zone = schedule.time_zone;
      const toggle = h("button", {
        type: "button",
        "aria-label": `${paused ? "Resume" : "Pause"} ${schedule.name}`,
        onclick: () => act(`/api/schedules/${encodeURIComponent(schedule.id)}/${paused ? "resume" : "pause"}`),
      }, paused ? "Resume" : "Pause");
      const remove = h("button", {
        type: "button",
        class: "danger",
        "aria-label": `Delete ${schedule.name}`,
        onclick: async () => {
          const sure = await confirmDialog({
            title: `Delete the schedule “${schedule.name}”?`,
            body: "It will not fire again. Its chat and past runs stay.",
            confirm: "Delete",
          });
          if (sure) act(`/api/schedules/${encodeURIComponent(schedule.id)}`, "DELETE");
        },
      }, "Delete");
      const fires = schedule.prompt
        ? `Sends a prompt: “${schedule.prompt.length > 80 ? `${schedule.prompt.slice(0, 79)}…` : schedule.prompt}”`
        : `Runs the workflow ${names.get(schedule.workflow_id) ?? schedule.workflow_id}`;
      const firings = schedule.last_runs ?? [];
      return h("li", { "aria-label": schedule.name, dataset: { id: schedule.id } },
        h("h3", { tabindex: "-1" }, schedule.name, " ", h("span", { class: "muted" }, paused ? "paused" : "active")),
        h("p", { class: "cron-words" }, schedule.description ?? ""),
        h("p", { class: "muted" }, h("span", { class: "mono" }, `${schedule.cron} (${zone})`)),
        h("p", {}, fires),
        h("p", {}, paused ? `Paused: ${schedule.paused_reason ?? ""}` : `Next firing: ${zonedTime(schedule.next_firings[0], zone)}`),
        h("p", {}, `Last outcome: ${outcomeLine(firings[0], zone)}`),
        firings.length > 0
          ? h("div", { class: "firings" },
            h("p", { class: "muted" }, "Recent firings:"),
            h("ol", { "aria-label": `Firings of ${schedule.name}` },
              firings.slice(0, SHOWN_FIRINGS).map((firing) => h("li", {},
                firingLine(firing, zone),
                firing.run_id ? [" · ", chatLink(schedule.chat_id, "Open the run", `Open the run due ${zonedTime(firing.due_at, zone, { seconds: true })} in its chat`)] : null))))
          : null,
        h("div", { class: "form-actions" },
          chatLink(schedule.chat_id, `Open the chat of ${schedule.name}`),
          h("button", { type: "button", "aria-label": `Edit ${schedule.name}`, onclick: () => editSchedule(schedule) }, "Edit"),
          toggle, remove));
    }));
    planRefresh(list);
  }

  /// Re-reads the schedules once the soonest due time has passed.
  function planRefresh(list) {
    clearTimeout(refreshTimer);
    const due = list
      .filter((s) => s.status === "active" && s.next_firings[0])
      .map((s) => new Date(s.next_firings[0]).getTime());
    const running = list.some((s) => ["claimed", "running"].includes(s.last_runs?.[0]?.status));
    if (due.length === 0 && !running) return;
    const soonest = due.length ? Math.min(...due) : Date.now();
    const wait = Math.max(REFRESH_AFTER_DUE_MS, soonest - Date.now() + REFRESH_AFTER_DUE_MS);
    // Timers past about 24.8 days fire at once: look again in a day instead.
    refreshTimer = setTimeout(loadSchedules, Math.min(wait, 86_400_000));
  }

  async function act(path, method = "POST") {
    refusal.textContent = "";
    try {
      await api(method, path, method === "POST" ? {} : undefined);
      await load();
    } catch (err) {
      refusal.textContent = `Not done: ${err.message}`;
    }
  }

  async function loadSchedules() {
    const ask = ++scheduleReads;
    try {
      const s = await api("GET", "/api/schedules");
      if (!destroyed && ask === scheduleReads) drawSchedules(s.schedules ?? []);
    } catch {
      if (!destroyed) planRefresh([]);
    }
  }

  async function load() {
    const ask = ++scheduleReads;
    try {
      const [w, s] = await Promise.all([api("GET", "/api/workflows"), api("GET", "/api/schedules")]);
      if (destroyed) return;
      workflowList = w.workflows ?? [];
      drawWorkflows(workflowList);
      if (ask === scheduleReads) drawSchedules(s.schedules ?? []);
    } catch (err) {
      if (!destroyed) refusal.textContent = `Could not load the automations: ${err.message}`;
    }
  }

  async function loadOnce() {
    const [toolList, account] = await Promise.all([
      api("GET", "/api/workflow-tools").catch(() => ({ tools: [] })),
      api("GET", "/auth/account").catch(() => null),
    ]);
    tools = toolList.tools ?? [];
    accountZone = account?.time_zone ?? "UTC";
  }

  const ready = loadOnce();
  load();
  return {
    el,
    destroy() {
      destroyed = true;
      clearTimeout(refreshTimer);
      openForm?.destroy?.();
    },
  };
}
