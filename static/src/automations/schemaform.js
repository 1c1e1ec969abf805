// A tool step's arguments as a form drawn from the tool's JSON Schema (`schema.js` says which
// field each property is): a label per field, "required" said in it, the schema's description
// as a hint, and each field's own validation message beside it when a save reads the form.
// Arguments the schema does not describe are kept as they were.
import { h } from "../ui/dom.js";
import { schemaFields, rawOf, readField, readWhole } from "./schema.js";

/// `{el, read}`: `read()` is `{value}` (the arguments object) or `{error}` (and the fields
/// show what is wrong; the first such is focused).
export function schemaForm({ schema, values = {}, idPrefix }) {
  const { fields, whole } = schemaFields(schema);
  if (whole) return wholeForm({ values, idPrefix });
  const known = new Set(fields.map((field) => field.name));
  const kept = Object.fromEntries(Object.entries(values ?? {}).filter(([name]) => !known.has(name)));
  const controls = fields.map((field) => control(field, values?.[field.name], `${idPrefix}-${field.name}`));
  const el = h("div", { class: "schema-form" }, controls.map((c) => c.el));
  return {
    el,
    read() {
      const value = { ...kept };
      let first = null;
      for (const c of controls) {
        const result = c.read();
        if (result.error) first ??= c;
        else if (!result.omit) value[c.field.name] = result.value;
      }
      if (first) {
        first.focus();
        return { error: "Some arguments need fixing (see the marked fields)." };
      }
      return { value };
    },
  };
}

function control(field, value, id) {
  const raw = rawOf(field, value);
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const error = h("p", { class: "field-error", id: errorId, hidden: true });
  const hint = field.description ? h("p", { class: "muted field-hint", id: hintId }, field.description) : null;
  const described = [hint ? hintId : null, errorId].filter(Boolean).join(" ");
  const required = field.required ? h("span", { class: "required" }, " (required)") : null;
  let input;
  if (field.kind === "boolean") {
    input = h("input", { type: "checkbox", id, checked: raw, "aria-describedby": described });
  } else if (field.kind === "enum") {
    input = h("select", { id, "aria-describedby": described, "aria-required": field.required ? "true" : null },
      field.required && raw !== "" ? null : h("option", { value: "" }, field.required ? "Choose…" : "(not set)"),
      field.options.map((option, at) => h("option", { value: String(at), selected: String(at) === raw }, String(option))));
    input.value = raw;
  } else if (field.kind === "strings" || field.kind === "json") {
    input = h("textarea", { id, rows: field.kind === "json" ? 4 : 3, value: raw, "aria-describedby": described, "aria-required": field.required ? "true" : null,
      class: field.kind === "json" ? "mono" : null, spellcheck: field.kind === "json" ? "false" : null });
  } else {
    const numeric = field.kind === "number" || field.kind === "integer";
    input = h("input", {
      id, value: raw, autocomplete: "off",
      inputmode: numeric ? (field.kind === "integer" ? "numeric" : "decimal") : null,
      maxlength: field.kind === "string" && field.maxLength ? field.maxLength : null,
      "aria-describedby": described, "aria-required": field.required ? "true" : null,
    });
  }
  const suffix = field.kind === "strings" ? " (one per line)" : field.kind === "json" ? " (JSON)" : "";
  const label = h("label", { for: id }, field.label, suffix, required);
  const el = field.kind === "boolean"
    ? h("div", { class: "field" }, h("div", { class: "check" }, input, label), hint, error)
    : h("div", { class: "field" }, label, input, hint, error);
  const show = (message) => {
    error.textContent = message ?? "";
    error.hidden = !message;
    if (message) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  };
  input.addEventListener("input", () => show(null));
  input.addEventListener("change", () => show(null));
  return {
    el,
    field,
    focus: () => input.focus(),
    read() {
      const result = readField(field, field.kind === "boolean" ? input.checked : input.value);
      show(result.error);
      return result;
    },
  };
}

/// The arguments as one JSON object, for a tool whose schema has no fields to draw.
function wholeForm({ values, idPrefix }) {
  const id = `${idPrefix}-json`;
  const text = values && Object.keys(values).length > 0 ? JSON.stringify(values, null, 2) : "";
  const input = h("textarea", { id, rows: 4, class: "mono", spellcheck: "false", value: text, "aria-describedby": `${id}-error` });
  const error = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  input.addEventListener("input", () => {
    error.hidden = true;
    input.removeAttribute("aria-invalid");
  });
  return {
    el: h("div", { class: "field" }, h("label", { for: id }, "Arguments (a JSON object)"), input, error),
    read() {
      const result = readWhole(input.value);
      error.textContent = result.error ?? "";
      error.hidden = !result.error;
      if (result.error) {
        input.setAttribute("aria-invalid", "true");
        input.focus();
      }
      return result;
    },
  };
}
