import { test } from "node:test";
import assert from "node:assert/strict";
import { categoryLabel, dateLine, newestFirst, newSaves, shortText } from "../src/memory/format.js";

test("categories get their labels", () => {
  assert.equal(categoryLabel("preference"), "Preference");
  assert.equal(categoryLabel("instruction"), "Instruction");
  assert.equal(categoryLabel("other"), "other");
});

test("a memory says when it was saved, or edited when it changed later", () => {
  const saved = { created_at: "2026-03-07T10:30:00Z", updated_at: "2026-03-07T10:30:00Z" };
  assert.equal(dateLine(saved, "en-GB"), "Saved 7 Mar 2026");
  assert.equal(dateLine({ ...saved, updated_at: "2026-03-09T08:00:00Z" }, "en-GB"), "Edited 9 Mar 2026");
});

test("memories are listed newest first", () => {
  const list = [{ id: "a", created_at: "2026-03-01T00:00:00Z" }, { id: "b", created_at: "2026-03-02T00:00:00Z" }];
  assert.deepEqual(newestFirst(list).map((m) => m.id), ["b", "a"]);
});

test("a finished save_memory call is noticed once; other tools and running calls are not", () => {
  const seen = new Set();
  const tools = [
    { id: "c1", name: "save_memory", status: "running" },
    { id: "c2", name: "calculator", status: "done" },
  ];
  assert.deepEqual(newSaves(tools, seen), []);
  tools[0].status = "done";
  assert.deepEqual(newSaves(tools, seen), ["c1"]);
  assert.deepEqual(newSaves(tools, seen), [], "a replayed frame changes nothing");
  tools.push({ id: "c3", name: "save_memory", status: "failed" });
  assert.deepEqual(newSaves(tools, seen), []);
});

test("long memories are shortened for button names", () => {
  assert.equal(shortText("I prefer  tea\nto coffee"), "I prefer tea to coffee");
  assert.equal(shortText("x".repeat(50), 10), "xxxxxxxxx…");
});
