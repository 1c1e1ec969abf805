// The schedule editor: a name, the cron expression with its preview — the expression in words
// and the next five firings in the schedule's time zone, both from
// `POST /api/schedules/preview` (the scheduler's own parser, so the page and the firings agree)
// —, the time zone (the account's when left empty), what it fires (a workflow, with an
// optional input, or a prompt), the chat it fires in (its own new one, or one of the reader's;
// fixed once made) and what a missed firing does. Saved with `POST /api/schedules` or
// `PATCH /api/schedules/{id}`; the server's refusal is shown beside Save, nothing typed lost.
import { api } from "../api.js";
import { h } from "../ui/dom.js";
import { zonedTime } from "./format.js";

/// Milliseconds of typing pause before the preview is asked for.
const PREVIEW_DELAY_MS = 300;

let forms = 0;

/// `{el, focus, destroy}` for `schedule` (null: a new one), choosing among `workflows`;
/// `chats`, the reader's, to fire in; `accountZone` is the zone a schedule without one takes.
export function scheduleForm({ schedule, workflows, chats, accountZone, onSaved, onCancel }) {
  const prefix = `sc${++forms}`;
  const field = (control, label, ...rest) =>
    h("div", { class: "field" }, h("label", { for: control.id }, label), control, ...rest);
  const name = h("input", { id: `${prefix}-name`, value: schedule?.name ?? "", maxlength: 200, autocomplete: "off", "aria-required": "true" });
  const cron = h("input", {
    id: `${prefix}-cron`, value: schedule?.cron ?? "", maxlength: 200, autocomplete: "off", spellcheck: "false",
    class: "mono", "aria-required": "true", "aria-describedby": `${prefix}-cron-hint ${prefix}-preview`, placeholder: "0 8 * * *",
  });
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  const zone = h("input", {
    id: `${prefix}-zone`, value: schedule?.time_zone ?? "", list: `${prefix}-zones`, maxlength: 100, autocomplete: "off",
    placeholder: accountZone, "aria-describedby": `${prefix}-zone-hint`,
  });
  const preview = h("div", { class: "cron-preview", id: `${prefix}-preview`, role: "status", "aria-live": "polite", "aria-label": "When it fires" });

  const promptChoice = "prompt";
  const target = h("select", { id: `${prefix}-target` },
    workflows.map((w) => h("option", { value: w.id, selected: w.id === schedule?.workflow_id }, `Workflow: ${w.name}`)),
    h("option", { value: promptChoice, selected: Boolean(schedule?.prompt) }, "A prompt"));
  if (!schedule && workflows.length === 0) target.value = promptChoice;
  const input = h("textarea", {
    id: `${prefix}-input`, rows: 2, class: "mono", spellcheck: "false", "aria-describedby": `${prefix}-input-hint`,
    value: schedule?.input ? JSON.stringify(schedule.input) : "",
  });
  const inputField = field(input, "Workflow input (a JSON object, optional)",
    h("p", { class: "muted field-hint", id: `${prefix}-input-hint` }, "The values of the workflow's {{input.…}} placeholders, such as {\"city\": \"Paris\"}."));
  const prompt = h("textarea", { id: `${prefix}-prompt`, rows: 3, maxlength: 20000, value: schedule?.prompt ?? "" });
  const promptField = field(prompt, "Prompt");

  const chat = h("select", { id: `${prefix}-chat`, disabled: Boolean(schedule), "aria-describedby": `${prefix}-chat-hint` },
    schedule ? null : h("option", { value: "" }, "A new chat of its own"),
    schedule && !chats.some((c) => c.id === schedule.chat_id) ? h("option", { value: schedule.chat_id }, "Its own chat") : null,
    chats.map((c) => h("option", { value: c.id, selected: c.id === schedule?.chat_id }, c.title || "Untitled chat")));
  const missed = h("select", { id: `${prefix}-missed` },
    h("option", { value: "skip", selected: schedule?.missed_policy !== "run_once" }, "Skip it"),
    h("option", { value: "run_once", selected: schedule?.missed_policy === "run_once" }, "Run it once when the server is back"));

  const refusal = h("p", { class: "doc-refusal", role: "alert" });
  const status = h("p", { class: "muted", role: "status" });
  const save = h("button", { type: "submit", class: "primary" }, schedule ? "Save changes" : "Create schedule");
  const heading = schedule ? `Edit the schedule ${schedule.name}` : "New schedule";
  const el = h("form", { class: "automation-form", "aria-label": heading, novalidate: true },
    h("h3", {}, heading),
    field(name, h("span", {}, "Name", h("span", { class: "required" }, " (required)"))),
    field(cron, h("span", {}, "Cron expression", h("span", { class: "required" }, " (required)")),
      h("p", { class: "muted field-hint", id: `${prefix}-cron-hint` },
        "Five fields: minute, hour, day of the month, month, day of the week. \"0 8 * * 1-5\" is 08:00 on weekdays.")),
    preview,
    field(zone, "Time zone",
      h("datalist", { id: `${prefix}-zones` }, zones.map((z) => h("option", { value: z }))),
      h("p", { class: "muted field-hint", id: `${prefix}-zone-hint` }, `Empty: your account's time zone (${accountZone}).`)),
    field(target, "What it fires"),
    inputField, promptField,
    field(chat, "Chat it fires in",
      h("p", { class: "muted field-hint", id: `${prefix}-chat-hint` },
        schedule ? "A schedule's chat cannot be changed." : "Each firing is a run in this chat.")),
    field(missed, "If a firing is missed (the server was down)"),
    h("div", { class: "form-actions" }, save, h("button", { type: "button", onclick: onCancel }, "Cancel")),
    refusal, status);

  const showTarget = () => {
    const isPrompt = target.value === promptChoice;
    inputField.hidden = isPrompt;
    promptField.hidden = !isPrompt;
  };
  showTarget();
  target.addEventListener("change", showTarget);

  // The preview: asked for after a pause in typing; an answer to an older expression is
  // dropped.
  let timer = null;
  let asked = 0;
  async function refresh() {
    const expression = cron.value.trim();
    const ask = ++asked;
    if (!expression) {
      preview.replaceChildren(h("p", { class: "muted" }, "Type a cron expression to see when it fires."));
      return;
    }
    const timeZone = zone.value.trim();
    try {
      const answer = await api("POST", "/api/schedules/preview", timeZone ? { cron: expression, time_zone: timeZone } : { cron: expression });
      if (ask !== asked) return;
      cron.removeAttribute("aria-invalid");
      const seconds = answer.next.some((at) => new Date(at).getUTCSeconds() !== 0);
      preview.replaceChildren(
        h("p", { class: "cron-words" }, answer.description),
        h("p", { class: "muted" }, `Next firings (${answer.time_zone}):`),
        h("ol", { "aria-label": "Next firings" }, answer.next.map((at) =>
          h("li", {}, h("time", { datetime: at }, zonedTime(at, answer.time_zone, { seconds }))))));
    } catch (err) {
      if (ask !== asked) return;
      cron.setAttribute("aria-invalid", "true");
      preview.replaceChildren(h("p", { class: "doc-refusal" }, err.message));
    }
  }
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, PREVIEW_DELAY_MS);
  };
  cron.addEventListener("input", later);
  zone.addEventListener("input", later);
  refresh();

  // A message about an earlier attempt goes once the form is changed.
  el.addEventListener("input", () => {
    refusal.textContent = "";
  });

  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    refusal.textContent = "";
    const title = name.value.trim();
    if (!title) return refuse(name, "Give the schedule a name.");
    name.removeAttribute("aria-invalid");
    if (!cron.value.trim()) return refuse(cron, "Type a cron expression.");
    const body = { name: title, cron: cron.value.trim(), missed_policy: missed.value };
    if (zone.value.trim()) body.time_zone = zone.value.trim();
    if (target.value === promptChoice) {
      if (!prompt.value.trim()) return refuse(prompt, "Type the prompt it sends.");
      body.prompt = prompt.value;
    } else {
      body.workflow_id = target.value;
      if (input.value.trim()) {
        let parsed;
        try {
          parsed = JSON.parse(input.value);
        } catch {
          parsed = null;
        }
        if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
          return refuse(input, "The workflow input must be a JSON object.");
        }
        input.removeAttribute("aria-invalid");
        body.input = parsed;
      }
    }
    if (!schedule && chat.value) body.chat_id = chat.value;
    save.disabled = true;
    status.textContent = "Saving…";
    try {
      const saved = schedule
        ? await api("PATCH", `/api/schedules/${encodeURIComponent(schedule.id)}`, body)
        : await api("POST", "/api/schedules", body);
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

  function refuse(control, message) {
    control.setAttribute("aria-invalid", "true");
    refusal.textContent = message;
    control.focus();
  }

  return {
    el,
    focus: () => name.focus(),
    destroy: () => clearTimeout(timer),
  };
}
