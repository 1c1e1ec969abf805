import { test } from "node:test";
import assert from "node:assert/strict";
import { documentCount, limitsLine, chosenIds, toggled } from "../src/knowledge/format.js";

test("a document count is said in words", () => {
  assert.equal(documentCount(0), "No documents");
  assert.equal(documentCount(undefined), "No documents");
  assert.equal(documentCount(1), "1 document");
  assert.equal(documentCount(12), "12 documents");
});

test("the limits line names both limits, or nothing without them", () => {
  assert.equal(limitsLine({ max_knowledge_bases: 50, max_files: 500 }), "Up to 50 knowledge bases, each with up to 500 documents.");
  assert.equal(limitsLine({ max_knowledge_bases: 3 }), "Up to 3 knowledge bases.");
  assert.equal(limitsLine(null), "");
});

test("an agent's knowledge bases keep its order, and ones not listed yet are kept", () => {
  const bases = [{ id: "kb_a" }, { id: "kb_b" }];
  assert.deepEqual(chosenIds({ knowledge_base_ids: ["kb_b", "kb_new", "kb_a"] }, bases), ["kb_b", "kb_a", "kb_new"]);
  assert.deepEqual(chosenIds(null, bases), []);
});

test("checking adds a knowledge base at the end, unchecking removes only it", () => {
  assert.deepEqual(toggled(["kb_a"], "kb_b", true), ["kb_a", "kb_b"]);
  assert.deepEqual(toggled(["kb_a", "kb_b"], "kb_a", false), ["kb_b"]);
  assert.deepEqual(toggled(["kb_a"], "kb_a", true), ["kb_a"]);
});
