// One ask_user question as a card, in every style (docs/spec.md#ask_user): default (options, single or
// multi-select, free text when allowed), confirm, rating (1-5) and form. A send_email
// confirmation is a confirm card that also shows the email (`ask.email`: from, to, subject,
// body) exactly as it would go; an MCP call that waits for approval is one that shows the call
// (`ask.mcp`: server_label, name, arguments) exactly as it would be made. A pending card takes an answer and hands it to `onAnswer`; an
// answered one shows the answer; a cancelled or expired one says so.

import { h } from "../ui/dom.js";

let cardCount = 0;

/// The answer as a person would read it.
export function describeAnswer(answer) {
  if (answer === null || answer === undefined) return "";
  if (typeof answer === "boolean") return answer ? "Yes" : "No";
  if (typeof answer === "number") return `${answer} out of 5`;
  if (Array.isArray(answer)) return answer.join(", ");
  if (typeof answer === "object") {
    return Object.entries(answer)
      .filter(([, value]) => value !== null && value !== "")
      .map(([key, value]) => `${key}: ${value}`)
      .join(", ");
  }
  return String(answer);
}

const CLOSED = {
  cancelled: "This question was cancelled: the conversation moved on before it was answered.",
  expired: "This question expired before it was answered.",
  failed: "This question's answer could not be delivered.",
};

/// `onAnswer(answer)` resolves when the answer was accepted, or throws an error to show.
export function askCard(ask, onAnswer) {
  const id = `ask-${++cardCount}`;
  const status = ask.status ?? "pending";
  const card = h("section", {
    class: `ask-card ask-${status}`,
    role: "group",
    "aria-labelledby": `${id}-q`,
    "aria-describedby": ask.email || ask.mcp ? `${id}-details` : null,
  });
  const label = ask.email
    ? "The assistant wants to send an email"
    : ask.mcp
      ? "The assistant wants to use a tool of an MCP server"
      : "Question from the assistant";
  card.append(h("p", { class: "ask-label" }, label));
  card.append(h("p", { class: "ask-question", id: `${id}-q` }, ask.question ?? ""));
  if (ask.email) card.append(emailDetails(ask.email, id));
  if (ask.mcp) card.append(mcpDetails(ask.mcp, id));
  if (status === "answered" || status === "completed") {
    card.append(h("p", { class: "ask-outcome" }, h("strong", null, "Your answer: "), describeAnswer(ask.answer)));
    return card;
  }
  if (status !== "pending") {
    card.append(h("p", { class: "ask-outcome", role: "status" }, CLOSED[status] ?? `This question is ${status}.`));
    return card;
  }
  if (ask.expires_at && new Date(ask.expires_at) <= new Date()) {
    card.append(h("p", { class: "ask-outcome", role: "status" }, CLOSED.expired));
    return card;
  }
  const error = h("p", { class: "ask-error", role: "alert", hidden: true });
  const submit = async (answer) => {
    error.hidden = true;
    for (const control of card.querySelectorAll("button, input, textarea")) control.disabled = true;
    try {
      await onAnswer(answer);
    } catch (err) {
      for (const control of card.querySelectorAll("button, input, textarea")) control.disabled = false;
      error.textContent = err.message;
      error.hidden = false;
    }
  };
  const body = {
    confirm: confirmBody,
    rating: ratingBody,
    form: formBody,
  }[ask.style] ?? defaultBody;
  card.append(body(ask, submit, error, id), error);
  return card;
}

/// The email a confirmation is about, as it would be sent; its body keeps its line breaks.
function emailDetails(email, id) {
  const row = (name, value) => [h("dt", null, name), h("dd", null, value ?? "")];
  return h("dl", { class: "ask-email", id: `${id}-details` },
    row("From", email.from),
    row("To", email.to),
    row("Subject", email.subject),
    h("dt", null, "Message"),
    h("dd", null, h("pre", { class: "ask-email-body" }, email.body ?? "")));
}

/// The MCP call an approval is about: the server, the tool and its arguments, as they would go.
function mcpDetails(mcp, id) {
  let args = mcp.arguments ?? "";
  try {
    args = JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    // Shown as the model sent them.
  }
  return h("dl", { class: "ask-email", id: `${id}-details` },
    h("dt", null, "Server"), h("dd", null, mcp.server_label ?? ""),
    h("dt", null, "Tool"), h("dd", null, mcp.name ?? ""),
    h("dt", null, "Arguments"),
    h("dd", null, h("pre", { class: "ask-email-body" }, args)));
}

function confirmBody(ask, submit) {
  const options = ask.options?.length ? ask.options : ["Yes", "No"];
  return h("div", { class: "ask-buttons" },
    options.map((option) => h("button", { type: "button", onclick: () => submit(option) }, option)));
}

function ratingBody(ask, submit) {
  return h("div", { class: "ask-buttons ask-rating", role: "group", "aria-label": "Rating from 1 to 5" },
    [1, 2, 3, 4, 5].map((n) =>
      h("button", { type: "button", "aria-label": `Rate ${n} out of 5`, onclick: () => submit(n) }, String(n))));
}

function formBody(ask, submit, error, id) {
  const form = h("form", { class: "ask-form", novalidate: true });
  const inputs = (ask.fields ?? []).map((field, i) => {
    const inputId = `${id}-f${i}`;
    const input = h("input", {
      id: inputId,
      name: field.key,
      type: /password/i.test(field.key) ? "password" : "text",
      placeholder: field.placeholder ?? null,
      required: field.required ? true : null,
      "aria-required": field.required ? "true" : null,
      autocomplete: "off",
    });
    form.append(h("div", { class: "field" },
      h("label", { for: inputId }, field.label, field.required ? h("span", { class: "required", "aria-hidden": "true" }, " *") : null),
      input));
    return { field, input };
  });
  form.append(h("button", { type: "submit" }, "Send answer"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const missing = inputs.filter(({ field, input }) => field.required && input.value.trim() === "");
    for (const { input } of inputs) input.removeAttribute("aria-invalid");
    if (missing.length > 0) {
      for (const { input } of missing) input.setAttribute("aria-invalid", "true");
      error.textContent = `Please fill in: ${missing.map(({ field }) => field.label).join(", ")}.`;
      error.hidden = false;
      missing[0].input.focus();
      return;
    }
    const answer = {};
    for (const { field, input } of inputs) if (input.value.trim() !== "") answer[field.key] = input.value.trim();
    submit(answer);
  });
  return form;
}

function defaultBody(ask, submit, error, id) {
  const options = ask.options ?? [];
  const freeText = ask.allow_free_text !== false;
  const wrap = h("div", { class: "ask-default" });
  if (options.length > 0 && ask.multi_select) {
    const boxes = options.map((option, i) => {
      const box = h("input", { type: "checkbox", id: `${id}-o${i}`, value: option });
      wrap.append(h("div", { class: "check" }, box, h("label", { for: `${id}-o${i}` }, option)));
      return box;
    });
    wrap.append(h("button", {
      type: "button",
      onclick: () => {
        const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
        if (chosen.length === 0) {
          error.textContent = "Choose at least one option.";
          error.hidden = false;
          return;
        }
        submit(chosen);
      },
    }, "Send choices"));
  } else if (options.length > 0) {
    wrap.append(h("div", { class: "ask-buttons" },
      options.map((option) => h("button", { type: "button", onclick: () => submit(option) }, option))));
  }
  if (freeText) {
    const input = h("input", { type: "text", id: `${id}-text`, autocomplete: "off" });
    const form = h("form", { class: "ask-free" },
      h("label", { for: `${id}-text` }, options.length ? "Or answer in your own words" : "Your answer"),
      h("div", { class: "row" }, input, h("button", { type: "submit" }, "Send answer")));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (input.value.trim() === "") {
        error.textContent = "Type an answer first.";
        error.hidden = false;
        input.focus();
        return;
      }
      submit(input.value.trim());
    });
    wrap.append(form);
  }
  return wrap;
}
