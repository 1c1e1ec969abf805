import { test } from "node:test";
import assert from "node:assert/strict";
import { stepLine, outcomeLine, firingTime, zonedTime, firingLine } from "../src/automations/format.js";
import { schemaFields, rawOf, readField, readWhole } from "../src/automations/schema.js";

test("a step is worded as its tool or its prompt, a long prompt shortened", () => {
  assert.equal(stepLine({ id: "sum", tool: "calculator", arguments: {} }), "sum: tool calculator");
  assert.equal(stepLine({ id: "say", prompt: "Explain it" }), "say: prompt “Explain it”");
  const long = stepLine({ id: "p", prompt: "x".repeat(500) });
  assert.ok(long.length < 140 && long.endsWith("…”"), long);
});

test("a firing's outcome names a failure's cause, and no firing says so", () => {
  assert.equal(outcomeLine(undefined), "not fired yet");
  const failed = outcomeLine({ status: "failed", due_at: "2026-01-01T00:00:00Z", error: "step bad failed" });
  assert.ok(failed.startsWith("failed at ") && failed.endsWith(": step bad failed"), failed);
  assert.ok(outcomeLine({ status: "succeeded", due_at: "2026-01-01T00:00:00Z" }).startsWith("succeeded at "));
  const skipped = outcomeLine({ status: "skipped", due_at: "2026-01-01T00:00:00Z", error: "its owner's account is disabled" });
  assert.ok(skipped.startsWith("skipped at ") && skipped.endsWith(": its owner's account is disabled"), skipped);
  assert.equal(firingTime(undefined), "none");
});

// The calculator's schema, as the server sends it, and one with every kind of field.
const calculator = {
  type: "object",
  properties: { expression: { type: "string", minLength: 1, maxLength: 1000, description: "The expression." } },
  required: ["expression"],
};
const everything = {
  type: "object",
  properties: {
    query: { type: "string" },
    limit: { type: ["integer", "null"], minimum: 1, maximum: 10 },
    ratio: { type: "number" },
    exact: { type: "boolean" },
    engine: { type: "string", enum: ["web", "news"] },
    urls: { type: "array", items: { type: "string" }, maxItems: 2 },
    filters: { type: "object", properties: { site: { type: "string" } } },
  },
  required: ["query", "engine"],
};

test("a schema's properties become fields of their kinds, required marked, nested ones as JSON", () => {
  const { fields, whole } = schemaFields(everything);
  assert.equal(whole, false);
  assert.deepEqual(fields.map((f) => [f.name, f.kind, f.required]), [
    ["query", "string", true], ["limit", "integer", false], ["ratio", "number", false], ["exact", "boolean", false],
    ["engine", "enum", true], ["urls", "strings", false], ["filters", "json", false],
  ]);
  const [expression] = schemaFields(calculator).fields;
  assert.equal(expression.description, "The expression.");
  assert.equal(expression.maxLength, 1000);
  assert.equal(schemaFields({ type: "object" }).whole, true, "no properties: the arguments as JSON");
  assert.equal(schemaFields(null).whole, true);
});

test("a field's text reads back as a typed value, or a message saying what is wrong", () => {
  const fields = Object.fromEntries(schemaFields(everything).fields.map((f) => [f.name, f]));
  const [expression] = schemaFields(calculator).fields;
  assert.deepEqual(readField(expression, ""), { error: "expression is required." });
  assert.deepEqual(readField(expression, "6 * 7"), { value: "6 * 7" });
  assert.deepEqual(readField(expression, "x".repeat(1001)), { error: "expression may have at most 1000 characters (it has 1001)." });
  assert.deepEqual(readField(fields.limit, ""), { omit: true }, "not required: left out");
  assert.deepEqual(readField(fields.limit, "3"), { value: 3 });
  assert.deepEqual(readField(fields.limit, "2.5"), { error: "limit must be a whole number." });
  assert.deepEqual(readField(fields.limit, "11"), { error: "limit must be at most 10." });
  assert.deepEqual(readField(fields.limit, "0"), { error: "limit must be at least 1." });
  assert.deepEqual(readField(fields.ratio, "abc"), { error: "ratio must be a number." });
  assert.deepEqual(readField(fields.ratio, "0.25"), { value: 0.25 });
  assert.deepEqual(readField(fields.exact, true), { value: true });
  assert.deepEqual(readField(fields.exact, false), { omit: true });
  assert.deepEqual(readField(fields.engine, "1"), { value: "news" });
  assert.deepEqual(readField(fields.engine, ""), { error: "engine is required." });
  assert.deepEqual(readField(fields.urls, " a \n\nb\n"), { value: ["a", "b"] });
  assert.deepEqual(readField(fields.urls, "a\nb\nc"), { error: "urls may have at most 2 lines." });
  assert.deepEqual(readField(fields.filters, "{\"site\": \"x\"}"), { value: { site: "x" } });
  assert.deepEqual(readField(fields.filters, "{nope"), { error: "filters must be valid JSON." });
});

test("stored arguments fill the fields they came from", () => {
  const fields = Object.fromEntries(schemaFields(everything).fields.map((f) => [f.name, f]));
  assert.equal(rawOf(fields.query, "rust"), "rust");
  assert.equal(rawOf(fields.limit, 4), "4");
  assert.equal(rawOf(fields.exact, true), true);
  assert.equal(rawOf(fields.engine, "news"), "1");
  assert.equal(rawOf(fields.urls, ["a", "b"]), "a\nb");
  assert.equal(rawOf(fields.query, undefined), "");
  // What a field shows reads back as the stored value.
  for (const [name, value] of [["limit", 4], ["engine", "web"], ["urls", ["x"]], ["filters", { site: "y" }]]) {
    assert.deepEqual(readField(fields[name], rawOf(fields[name], value)), { value }, name);
  }
});

test("arguments typed whole must be a JSON object", () => {
  assert.deepEqual(readWhole(""), { value: {} });
  assert.deepEqual(readWhole("{\"q\": 1}"), { value: { q: 1 } });
  assert.ok(readWhole("[1]").error);
  assert.ok(readWhole("{").error);
});

test("times are read in the schedule's zone, and a firing says how it ended", () => {
  const at = "2026-01-05T07:00:00Z";
  assert.match(zonedTime(at, "Europe/Paris"), /08:00/);
  assert.match(zonedTime(at, "Asia/Tokyo"), /16:00/);
  assert.match(zonedTime("2026-01-05T07:00:05Z", "UTC", { seconds: true }), /07:00:05/);
  assert.equal(zonedTime(undefined, "UTC"), "none");
  const failed = firingLine({ status: "failed", due_at: at, error: "step sum failed" }, "UTC");
  assert.ok(failed.startsWith("Failed, due ") && failed.endsWith(": step sum failed"), failed);
  assert.match(firingLine({ status: "succeeded", due_at: at }, "UTC"), /^Succeeded, due .*07:00$/);
});
