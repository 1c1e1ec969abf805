import { test } from "node:test";
import assert from "node:assert/strict";
import { SseDecoder } from "../src/sse.js";

const frames = (chunks) => {
  const decoder = new SseDecoder();
  return chunks.flatMap((chunk) => decoder.push(chunk));
};

test("frames carry their id, event name and data", () => {
  assert.deepEqual(frames(["id: 3\nevent: message\ndata: {\"a\":1}\n\n"]), [{ id: "3", event: "message", data: '{"a":1}' }]);
});

test("a frame split anywhere, even inside \\r\\n, decodes the same", () => {
  const text = "id: 1\r\ndata: one\r\n\r\n: keep-alive\r\n\r\nid: 2\r\ndata: two\r\ndata: lines\r\n\r\n";
  const whole = frames([text]);
  assert.deepEqual(whole, [
    { id: "1", event: "message", data: "one" },
    { id: "2", event: "message", data: "two\nlines" },
  ]);
  for (let cut = 1; cut < text.length; cut++) {
    assert.deepEqual(frames([text.slice(0, cut), text.slice(cut)]), whole, `cut at ${cut}`);
  }
  assert.deepEqual(frames([...text]), whole, "one character at a time");
});

test("comments and frames without data dispatch nothing", () => {
  assert.deepEqual(frames([": ping\n\nevent: x\n\n"]), []);
});
