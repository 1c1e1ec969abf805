import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_LIMITS, refusalOf, imageParts, imageUrl, filesOf } from "../src/conversation/images.js";

const file = (name, type, size) => ({ name, type, size });

test("only the image types a model reads, within the size and count limits, may be attached", () => {
  const limits = { ...DEFAULT_LIMITS, max_image_bytes: 2048, max_images_per_message: 2 };
  assert.equal(refusalOf(file("cat.png", "image/png", 100), limits, 0), null);
  assert.equal(refusalOf(file("cat.webp", "image/webp", 2048), limits, 1), null);
  assert.equal(
    refusalOf(file("notes.txt", "text/plain", 10), limits, 0),
    "notes.txt is not an image that can be sent (PNG, JPEG, GIF or WebP).",
  );
  assert.match(refusalOf(file("vector.svg", "image/svg+xml", 10), limits, 0), /not an image that can be sent/);
  assert.equal(
    refusalOf(file("huge.png", "image/png", 4096), limits, 0),
    "huge.png is too large (4 KB); an image may have at most 2 KB.",
  );
  assert.equal(refusalOf(file("third.png", "image/png", 10), limits, 2), "A message may carry at most 2 images.");
  assert.match(refusalOf(file("", "text/html", 10), limits, 0), /^The pasted image/);
});

test("a stored message's image parts are found among its parts and served by the chat API", () => {
  const node = { parts: [{ type: "artifact", identifier: "x" }, { type: "image", attachment_id: "att_1", mime_type: "image/png" }] };
  assert.deepEqual(imageParts(node), [node.parts[1]]);
  assert.deepEqual(imageParts({ parts: null }), []);
  assert.deepEqual(imageParts(undefined), []);
  assert.equal(imageUrl("c 1", node.parts[1]), "/chat/api/c%201/attachments/att_1");
  assert.equal(imageUrl("c", { ...node.parts[1], preview_url: "blob:x" }), "blob:x");
});

test("a paste or drop yields its files, from the file list or the items", () => {
  const png = { name: "a.png" };
  assert.deepEqual(filesOf({ files: [png] }), [png]);
  assert.deepEqual(filesOf({ files: [], items: [{ kind: "string" }, { kind: "file", getAsFile: () => png }] }), [png]);
  assert.deepEqual(filesOf(null), []);
});
