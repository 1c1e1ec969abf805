// A tool's parameters (its JSON Schema) as form fields, and a field's typed text back as an
// argument: plain functions, tested beside the others. A string, number, integer, boolean, enum
// or array of strings becomes a field of its own; anything else (a nested object, an array of
// objects, a schema without properties) is edited as JSON. `schemaForm.js` draws them.

/// The schema's fields: `{fields, whole}`; `whole` is true when the arguments have no
/// describable properties and are edited as one JSON object.
export function schemaFields(schema) {
  const properties = schema && typeof schema === "object" ? schema.properties : null;
  if (!properties || typeof properties !== "object" || Object.keys(properties).length === 0) {
    return { fields: [], whole: true };
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(properties).map(([name, property]) => fieldOf(name, property ?? {}, required.has(name)));
  return { fields, whole: false };
}

/// The one type of a property (`["string", "null"]` is a string that may be left out).
function typeOf(property) {
  const type = property.type;
  if (Array.isArray(type)) return type.find((t) => t !== "null") ?? null;
  if (type) return type;
  const variants = property.anyOf ?? property.oneOf;
  if (Array.isArray(variants)) {
    const real = variants.filter((v) => v && v.type !== "null");
    if (real.length === 1) return typeOf(real[0]);
  }
  return null;
}

function fieldOf(name, property, required) {
  const type = typeOf(property);
  const field = {
    name,
    label: typeof property.title === "string" && property.title ? property.title : name,
    description: typeof property.description === "string" ? property.description : "",
    required,
    kind: "json",
  };
  if (Array.isArray(property.enum) && property.enum.length > 0) {
    return { ...field, kind: "enum", options: property.enum };
  }
  if (type === "string") {
    return { ...field, kind: "string", minLength: property.minLength, maxLength: property.maxLength };
  }
  if (type === "number" || type === "integer") {
    return { ...field, kind: type, minimum: property.minimum, maximum: property.maximum };
  }
  if (type === "boolean") return { ...field, kind: "boolean" };
  if (type === "array") {
    const items = property.items ?? {};
    if (typeOf(items) === "string" && !Array.isArray(items.enum)) {
      return { ...field, kind: "strings", minItems: property.minItems, maxItems: property.maxItems };
    }
  }
  return field;
}

/// An argument's value as its field shows it (text; a boolean for a checkbox; an enum's index).
export function rawOf(field, value) {
  if (value === undefined || value === null) return field.kind === "boolean" ? false : "";
  switch (field.kind) {
    case "boolean": return value === true;
    case "enum": {
      const at = field.options.findIndex((option) => JSON.stringify(option) === JSON.stringify(value));
      return at === -1 ? "" : String(at);
    }
    case "strings": return Array.isArray(value) ? value.join("\n") : String(value);
    case "json": return JSON.stringify(value, null, 2);
    case "string": return typeof value === "string" ? value : JSON.stringify(value);
    default: return String(value);
  }
}

/// A field's raw value read back: `{value}`, `{omit: true}` (left empty, not required) or
/// `{error}` (a sentence for the person typing).
export function readField(field, raw) {
  const label = field.label;
  if (field.kind === "boolean") {
    if (raw === true) return { value: true };
    return field.required ? { value: false } : { omit: true };
  }
  const text = String(raw ?? "");
  if (text.trim() === "") {
    return field.required ? { error: `${label} is required.` } : { omit: true };
  }
  switch (field.kind) {
    case "string": {
      const length = [...text].length;
      if (field.minLength !== undefined && length < field.minLength) {
        return { error: `${label} needs at least ${field.minLength} characters.` };
      }
      if (field.maxLength !== undefined && length > field.maxLength) {
        return { error: `${label} may have at most ${field.maxLength} characters (it has ${length}).` };
      }
      return { value: text };
    }
    case "number":
    case "integer": {
      const number = Number(text.trim());
      if (!Number.isFinite(number)) return { error: `${label} must be a number.` };
      if (field.kind === "integer" && !Number.isInteger(number)) return { error: `${label} must be a whole number.` };
      if (field.minimum !== undefined && number < field.minimum) return { error: `${label} must be at least ${field.minimum}.` };
      if (field.maximum !== undefined && number > field.maximum) return { error: `${label} must be at most ${field.maximum}.` };
      return { value: number };
    }
    case "enum": {
      const option = field.options[Number(text)];
      return option === undefined ? { error: `Choose one of ${label}'s values.` } : { value: option };
    }
    case "strings": {
      const items = text.split("\n").map((line) => line.trim()).filter(Boolean);
      if (field.minItems !== undefined && items.length < field.minItems) {
        return { error: `${label} needs at least ${field.minItems} lines.` };
      }
      if (field.maxItems !== undefined && items.length > field.maxItems) {
        return { error: `${label} may have at most ${field.maxItems} lines.` };
      }
      return { value: items };
    }
    default: {
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { error: `${label} must be valid JSON.` };
      }
    }
  }
}

/// The whole arguments typed as JSON: `{value}` (an object) or `{error}`.
export function readWhole(text) {
  if (text.trim() === "") return { value: {} };
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return { value };
  } catch {
    // Worded below.
  }
  return { error: "The arguments must be a JSON object, such as {\"query\": \"…\"}." };
}
