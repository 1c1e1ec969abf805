import { test } from "node:test";
import assert from "node:assert/strict";
import { hitPath, segments } from "../src/chats/search.js";
import { linkedMessageId } from "../src/conversation/linked.js";

test("a snippet is cut at its highlight ranges, counted in UTF-16 units", () => {
  const text = "Café ☕ — the pier 🌊 pier";
  const start = text.indexOf("pier");
  const last = text.lastIndexOf("pier");
  assert.deepEqual(segments(text, [[start, start + 4], [last, last + 4]]), [
    { text: "Café ☕ — the ", marked: false },
    { text: "pier", marked: true },
    { text: " 🌊 ", marked: false },
    { text: "pier", marked: true },
  ]);
});

test("ranges out of order, empty or past the end are skipped, and text stays text", () => {
  assert.deepEqual(segments("<b>x</b> y", [[8, 10], [0, 3], [4, 4], [9, 99]]), [
    { text: "<b>x</b>", marked: false },
    { text: " y", marked: true },
  ]);
  assert.deepEqual(segments("plain", []), [{ text: "plain", marked: false }]);
  assert.deepEqual(segments("plain", undefined), [{ text: "plain", marked: false }]);
});

test("a hit links its chat at its message, and the conversation reads the link back", () => {
  const path = hitPath({ chat_id: "c/1", message_id: "m 2" });
  assert.equal(path, "/c/c%2F1#m-m%202");
  assert.equal(linkedMessageId(path.slice(path.indexOf("#"))), "m 2");
  assert.equal(linkedMessageId("#top"), null);
  assert.equal(linkedMessageId(""), null);
  assert.equal(linkedMessageId("#m-%E0%A4%A"), null);
});
