import { test } from "node:test";
import assert from "node:assert/strict";
import { codeOf, codeOutput } from "../src/conversation/codeinterpreter.js";
import { newRun, applyFrame } from "../src/conversation/run.js";
import { requestable } from "../src/conversation/agent.js";

const container = "cntr_0123456789abcdef0123456789abcdef";
const file = "cfile_0123456789abcdef0123456789abcdef";
const png = "data:image/png;base64,iVBORw0KGgo=";
const files = [{ file_id: file, path: "/mnt/data/chart.png", bytes: 2048, filename: "chart.png" }];

test("a call's code comes from its arguments, whole or as far as a shortened record goes", () => {
  assert.deepEqual(codeOf({ code: "print(1)" }), { code: "print(1)", shortened: false });
  assert.deepEqual(codeOf(JSON.stringify({ code: "x = 'a\"b'\nprint(x)" })), { code: "x = 'a\"b'\nprint(x)", shortened: false });
  const long = JSON.stringify({ code: `print("\u00e9")\n${"y = 1\n".repeat(300)}` });
  const shortened = `${long.slice(0, 1000)}\n[truncated: ${long.length} characters, showing the first 1000]`;
  const got = codeOf(shortened);
  assert.equal(got.shortened, true);
  assert.ok(got.code.startsWith('print("é")\ny = 1\n'), got.code.slice(0, 40));
  assert.ok(!got.code.includes("truncated"));
  assert.equal(codeOf({ query: "x" }), null);
  assert.equal(codeOf(null), null);
});

test("the live event and a stored result give the card the same output, figures live only", () => {
  const live = codeOutput({ call_id: "c1", container_id: container, logs: "mean=2.0\n", error: null, limit: null, files, x_images: [png] });
  assert.deepEqual(live, {
    logs: "mean=2.0\n", error: null, limit: null, images: [png],
    files: [{ name: "chart.png", size: "2 KB", url: `/v1/containers/${container}/files/${file}/content` }],
  });
  const stored = codeOutput(JSON.stringify({ container_id: container, logs: "mean=2.0\n", files, figures: "1 figure(s) drawn" }));
  assert.deepEqual(stored, { ...live, images: [] });
  const failed = codeOutput({ container_id: container, logs: "", files: [], error: "ZeroDivisionError: division by zero" });
  assert.equal(failed.error, "ZeroDivisionError: division by zero");
});

test("only the server's own ids and PNG data URLs are used", () => {
  const out = codeOutput({
    container_id: container, logs: "",
    files: [{ file_id: "cfile_../../v1/keys", filename: "x" }, { file_id: file.toUpperCase(), filename: "y" }, ...files],
    x_images: ["https://evil.test/x.png", "data:image/svg+xml;base64,PHN2Zz4=", 'data:image/png;base64,AAAA"onerror=x', png],
  });
  assert.deepEqual(out.files.map((f) => f.name), ["chart.png"]);
  assert.deepEqual(out.images, [png]);
  assert.deepEqual(codeOutput({ container_id: "cntr_../x", logs: "hi", files }).files, [], "no container, no links");
  assert.equal(codeOutput({ error: "timed out", code: "timeout", suggestion: "shorter" }), null, "a failed call is the tool's error");
  assert.equal(codeOutput("not json"), null);
});

test("a run folds the output event into its call, and a replay changes nothing", () => {
  const run = newRun("r1");
  const frames = [
    { id: 1, data: JSON.stringify({ type: "tool_call", id: "c1", name: "code_interpreter", arguments: { code: "print(1)" } }) },
    { id: 2, data: JSON.stringify({ type: "x_code_interpreter.output", call_id: "c1", item_id: "ci_c1", container_id: container, logs: "1\n", error: null, limit: null, files, x_images: [png] }) },
    { id: 3, data: JSON.stringify({ type: "tool_result", toolCallId: "c1", name: "code_interpreter", success: true,
      result: { container_id: container, logs: "1\n", files }, resultPreview: "{}" }) },
  ];
  for (const frame of frames) applyFrame(run, frame);
  assert.equal(run.tools.length, 1);
  assert.equal(run.tools[0].status, "done");
  assert.deepEqual(run.tools[0].interpreter.images, [png], "the event's figures stay after the result");
  const again = structuredClone(run);
  for (const frame of frames) applyFrame(again, frame);
  assert.deepEqual(again.tools, run.tools);
});

test("the settings' checkbox is allowed when the agent lets a chat choose its tools and the server has it", () => {
  const listed = [{ name: "calculator" }, { name: "web_search" }];
  const every = { tools_enabled: true, enabled_tools: null };
  assert.deepEqual(requestable(every, listed), ["code_interpreter", "browser_action"]);
  assert.deepEqual(requestable(every, listed, [{ name: "code_interpreter", reason: "no bubblewrap" }]), ["browser_action"], "not on a server without it");
  assert.deepEqual(requestable({ tools_enabled: true, enabled_tools: ["calculator"] }, listed), [], "an agent naming its tools lists it if it names it");
  assert.deepEqual(requestable(every, [...listed, { name: "code_interpreter" }]), ["browser_action"], "already listed");
  assert.deepEqual(requestable({ tools_enabled: false, enabled_tools: null }, []), [], "tools off");
});
