import { test } from "node:test";
import assert from "node:assert/strict";
import { formatSize, typeLabel, documentState, newestFirst, stillProcessing } from "../src/documents/format.js";
import { planChunk, backoffDelay, encodeMetadata, parseOffset, retryable, CHUNK_BYTES } from "../src/documents/tus.js";

test("sizes are written in binary units with at most one decimal", () => {
  assert.equal(formatSize(0), "0 bytes");
  assert.equal(formatSize(1), "1 byte");
  assert.equal(formatSize(812), "812 bytes");
  assert.equal(formatSize(1536), "1.5 KB");
  assert.equal(formatSize(4 * 1024 * 1024), "4 MB");
  assert.equal(formatSize(200 * 1024 * 1024), "200 MB");
  assert.equal(formatSize(2048576), "2 MB");
  assert.equal(formatSize(-1), "");
});

test("types get a short name, unknown ones stay as they are", () => {
  assert.equal(typeLabel("application/pdf"), "PDF");
  assert.equal(typeLabel("text/markdown; charset=utf-8"), "Markdown");
  assert.equal(typeLabel("text/x-rust"), "rust code");
  assert.equal(typeLabel("application/zip"), "application/zip");
  assert.equal(typeLabel(""), "Unknown type");
});

test("each seed 002 status maps to its inline mark", () => {
  assert.equal(documentState({ status: "uploading" }).kind, "uploading");
  assert.deepEqual(documentState({ status: "processing" }), { kind: "processing", label: "Processing", detail: null, warning: null, busy: true });
  assert.equal(documentState({ status: "processed", searchable: true }).kind, "searchable");
  assert.equal(documentState({ status: "processed", searchable: false }).kind, "stored");
  const failed = documentState({ status: "error", error: "could not read the PDF: bad header" });
  assert.equal(failed.kind, "error");
  assert.equal(failed.detail, "could not read the PDF: bad header");
  assert.equal(documentState({ status: "error" }).detail, "The server gave no reason.");
});

test("the truncation warning travels with a processed document", () => {
  const state = documentState({ status: "processed", searchable: true, warning: "the text was truncated to the first 500000 characters" });
  assert.equal(state.kind, "searchable");
  assert.match(state.warning, /truncated/);
});

test("documents are listed newest first and polled only while one processes", () => {
  const docs = [
    { artifact_id: "a", uploaded_at: "2026-03-07T10:30:00Z", status: "processed" },
    { artifact_id: "b", uploaded_at: "2026-03-07T10:31:00Z", status: "processing" },
  ];
  assert.deepEqual(newestFirst(docs).map((d) => d.artifact_id), ["b", "a"]);
  assert.equal(stillProcessing(docs), true);
  assert.equal(stillProcessing([docs[0], { status: "error" }, { status: "uploading" }]), false);
});

test("chunks run from the server's offset to the end, the last one short", () => {
  const size = 2.5 * CHUNK_BYTES;
  assert.deepEqual(planChunk(0, size), { start: 0, end: CHUNK_BYTES });
  assert.deepEqual(planChunk(CHUNK_BYTES, size), { start: CHUNK_BYTES, end: 2 * CHUNK_BYTES });
  // Resumed from an offset in the middle of a chunk (bytes that reached the server count).
  assert.deepEqual(planChunk(1_500_000, size), { start: 1_500_000, end: 1_500_000 + CHUNK_BYTES });
  assert.deepEqual(planChunk(2 * CHUNK_BYTES, size), { start: 2 * CHUNK_BYTES, end: size });
  assert.equal(planChunk(size, size), null);
  assert.deepEqual(planChunk(0, 10, 4), { start: 0, end: 4 });
});

test("reconnects back off from half a second to eight", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 12].map(backoffDelay), [500, 1000, 2000, 4000, 8000, 8000, 8000]);
});

test("metadata values are base64 of their UTF-8 bytes", () => {
  assert.equal(encodeMetadata({ filename: "notes.txt" }), "filename bm90ZXMudHh0");
  const encoded = encodeMetadata({ filename: "résumé.pdf", filetype: "application/pdf" });
  const [first, second] = encoded.split(",");
  assert.equal(Buffer.from(first.split(" ")[1], "base64").toString("utf8"), "résumé.pdf");
  assert.equal(second, `filetype ${Buffer.from("application/pdf").toString("base64")}`);
});

test("offsets are read strictly; only lost connections and conflicts are retried", () => {
  assert.equal(parseOffset("1048576"), 1048576);
  assert.equal(parseOffset(null), null);
  assert.equal(parseOffset("12abc"), null);
  assert.equal(parseOffset("-3"), null);
  assert.ok(retryable(0) && retryable(409) && retryable(502));
  assert.ok(!retryable(404) && !retryable(410) && !retryable(413) && !retryable(412));
});
