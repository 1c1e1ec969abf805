// The automations page (`/automations`): the reader's workflows, each with its steps in order
// (read-only: they are made and changed over `/api/workflows` or by an agent), and schedules,
// each with its timing, next firing, last outcome (and why it paused) and its actions: pause or
// resume, delete (after a confirmation), and the link to its chat, where its firings are runs.
import { api } from "../api.js";
import { navigate } from "../router.js";
import { h } from "../ui/dom.js";
import { confirmDialog } from "../ui/dialog.js";
import { stepLine, outcomeLine, firingTime } from "./format.js";

export function automationsView({ onMenu }) {
  let destroyed = false;
  const refusal = h("p", { class: "doc-refusal", role: "alert" });
  const workflows = h("ul", { class: "kb-list", "aria-label": "Your workflows" });
  const noWorkflows = h("p", { class: "muted", hidden: true }, "No workflows yet.");
  const schedules = h("ul", { class: "kb-list", "aria-label": "Your schedules" });
  const noSchedules = h("p", { class: "muted", hidden: true }, "No schedules yet.");
  const el = h("main", { class: "knowledge", "aria-labelledby": "automations-heading" },
    h("header", { class: "chat-header" },
      h("button", { type: "button", class: "icon menu", "aria-label": "Show chats", onclick: onMenu }, "☰"),
      h("h1", { id: "automations-heading", class: "chat-heading" }, "Automations")),
    h("div", { class: "knowledge-body" },
      h("section", { class: "kb-index", "aria-labelledby": "schedules-heading" },
        h("h2", { id: "schedules-heading" }, "Schedules"),
        h("p", { class: "muted kb-intro" },
          "Each firing is a run in the schedule's chat. Agents create schedules with create_schedule."),
        refusal, schedules, noSchedules),
      h("section", { class: "kb-index", "aria-labelledby": "workflows-heading" },
        h("h2", { id: "workflows-heading" }, "Workflows"),
        h("p", { class: "muted kb-intro" },
          "Recipes of tool calls and prompts, run with execute_workflow or on a schedule."),
        workflows, noWorkflows)));
  document.title = "Automations · Colloquy";

  function drawWorkflows(list) {
    noWorkflows.hidden = list.length > 0;
    workflows.replaceChildren(...list.map((workflow) =>
      h("li", { "aria-label": workflow.name },
        h("h3", {}, workflow.name, " ", h("span", { class: "muted" }, `version ${workflow.version}`)),
        workflow.description ? h("p", { class: "muted" }, workflow.description) : null,
        h("ol", { "aria-label": `Steps of ${workflow.name}` },
          ...workflow.steps.map((step) => h("li", {}, stepLine(step)))))));
  }

  function drawSchedules(list) {
    noSchedules.hidden = list.length > 0;
    schedules.replaceChildren(...list.map((schedule) => {
      const paused = schedule.status === "paused";
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
      const chat = `/c/${encodeURIComponent(schedule.chat_id)}`;
      return h("li", { "aria-label": schedule.name },
        h("h3", {}, schedule.name, " ", h("span", { class: "muted" }, paused ? "paused" : "active")),
        h("p", {}, `${schedule.cron} (${schedule.time_zone})`),
        h("p", {}, paused ? `Paused: ${schedule.paused_reason ?? ""}` : `Next firing: ${firingTime(schedule.next_firings[0])}`),
        h("p", {}, `Last outcome: ${outcomeLine(schedule.last_runs[0])}`),
        h("p", {},
          h("a", { href: chat, onclick: (event) => { event.preventDefault(); navigate(chat); } }, `Open the chat of ${schedule.name}`),
          " ", toggle, " ", remove));
    }));
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

  async function load() {
    try {
      const [w, s] = await Promise.all([api("GET", "/api/workflows"), api("GET", "/api/schedules")]);
      if (destroyed) return;
      drawWorkflows(w.workflows ?? []);
      drawSchedules(s.schedules ?? []);
    } catch (err) {
      if (!destroyed) refusal.textContent = `Could not load the automations: ${err.message}`;
    }
  }

  load();
  return {
    el,
    destroy() {
      destroyed = true;
    },
  };
}
