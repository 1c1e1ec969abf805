import { test } from "node:test";
import assert from "node:assert/strict";

import { stableLength } from "../src/markdown/blocks.js";

test("the finished part of a streaming answer ends at a blank line outside code and math", () => {
  assert.equal(stableLength("# Title\n\npara"), "# Title\n\n".length);
  assert.equal(stableLength("intro\n\n```js\na\n\nb"), "intro\n\n".length, "not inside an open fence");
  assert.equal(stableLength("intro\n\n```js\na\n\nb\n```\n\nnext"), "intro\n\n```js\na\n\nb\n```\n\n".length);
  assert.equal(stableLength("$$\na\n\nb"), 0, "not inside display math");
  assert.equal(stableLength("no blank line yet"), 0);
});
