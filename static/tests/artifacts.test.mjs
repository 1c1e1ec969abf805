import { test } from "node:test";
import assert from "node:assert/strict";
import { rendererFor, languageOf, prettyJson, versionList, typeLabel, artifactPaths, changedArtifacts } from "../src/artifacts/kinds.js";

test("each artifact type gets its renderer, and an unknown one is shown as text", () => {
  assert.equal(rendererFor("text/markdown"), "markdown");
  assert.equal(rendererFor("text/x-python"), "code");
  assert.equal(rendererFor("text/plain"), "code");
  assert.equal(rendererFor("application/json"), "json");
  assert.equal(rendererFor("text/html"), "html");
  assert.equal(rendererFor("image/svg+xml"), "svg");
  assert.equal(rendererFor("text/x-mermaid"), "mermaid");
  assert.equal(rendererFor(" Text/HTML; charset=utf-8"), "html");
  assert.equal(rendererFor("application/octet-stream"), "text");
  assert.equal(rendererFor(undefined), "text");
});

test("code is highlighted in its language, from the field or the type, else as plain text", () => {
  assert.equal(languageOf({ type: "text/x-python" }), "python");
  assert.equal(languageOf({ mime_type: "text/x-rust", language: "Rust" }), "rust");
  assert.equal(languageOf({ type: "text/x-c++" }), "c++");
  assert.equal(languageOf({ type: "text/plain" }), "plaintext");
  assert.equal(languageOf({ type: "text/x-python", language: 'py" onload="x' }), "plaintext", "nothing odd reaches a class name");
});

test("JSON is indented, and text that is not JSON is kept as it is with the reason", () => {
  assert.deepEqual(prettyJson('{"a":[1,2],"b":{"c":null}}'), {
    text: '{\n  "a": [\n    1,\n    2\n  ],\n  "b": {\n    "c": null\n  }\n}',
    error: null,
  });
  const broken = prettyJson("{nope");
  assert.equal(broken.text, "{nope");
  assert.match(broken.error, /^Not valid JSON: /);
});

test("the version switcher offers every version, newest first, the latest marked", () => {
  assert.deepEqual(versionList(3), [
    { version: 3, label: "Version 3 (latest)" },
    { version: 2, label: "Version 2" },
    { version: 1, label: "Version 1" },
  ]);
  assert.deepEqual(versionList(undefined), [{ version: 1, label: "Version 1 (latest)" }]);
});

test("the list names each type in a word", () => {
  assert.equal(typeLabel("text/x-python"), "Python");
  assert.equal(typeLabel("text/plain"), "Text");
  assert.equal(typeLabel("application/json"), "JSON");
  assert.equal(typeLabel("text/x-mermaid"), "Diagram");
  assert.equal(typeLabel("image/svg+xml"), "SVG");
});

test("the latest version's paths carry no number, an older one's do", () => {
  const base = "/chat/api/c1";
  assert.deepEqual(artifactPaths(base, "a 1", 2, 2), {
    json: "/chat/api/c1/artifacts/a%201",
    raw: "/chat/api/c1/artifacts/a%201/raw",
    preview: "/chat/api/c1/artifacts/a%201/preview",
  });
  assert.deepEqual(artifactPaths(base, "a1", 1, 2), {
    json: "/chat/api/c1/artifacts/a1/versions/1",
    raw: "/chat/api/c1/artifacts/a1/versions/1/raw",
    preview: "/chat/api/c1/artifacts/a1/versions/1/preview",
  });
  assert.equal(artifactPaths(base, "notes.md").json, "/chat/api/c1/artifacts/notes.md");
});

test("a run's artifact events are reported once per new version, so a replay opens nothing", () => {
  const seen = new Map();
  const run = [{ identifier: "a", version: 1 }];
  assert.deepEqual(changedArtifacts(run, seen).map((a) => a.identifier), ["a"]);
  run.push({ identifier: "b", version: 1 });
  assert.deepEqual(changedArtifacts(run, seen).map((a) => a.identifier), ["b"]);
  run[0].version = 2;
  assert.deepEqual(changedArtifacts(run, seen).map((a) => `${a.identifier}@${a.version}`), ["a@2"]);
  // A re-attach replays the run from its start into a new run object, frame by frame.
  const replay = [];
  for (const [identifier, version] of [["a", 1], ["b", 1], ["a", 2]]) {
    const existing = replay.find((a) => a.identifier === identifier);
    if (existing) existing.version = version;
    else replay.push({ identifier, version });
    assert.deepEqual(changedArtifacts(replay, seen), [], `replaying ${identifier}@${version}`);
  }
});
