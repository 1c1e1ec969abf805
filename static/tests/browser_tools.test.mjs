import { test } from "node:test";
import assert from "node:assert/strict";
import { browserPage } from "../src/conversation/browser.js";
import { newRun, applyFrame } from "../src/conversation/run.js";

const shot = "/chat/api/c1/screenshots/shot_0123456789abcdef0123456789abcdef";

test("a browser tool's result names the page it left and its screenshot", () => {
  assert.deepEqual(browserPage("browser_action", { url: "http://a.test/", screenshot: { url: shot } }),
    { url: "http://a.test/", screenshotUrl: shot });
  assert.deepEqual(browserPage("analyze_page", JSON.stringify({ url: "http://a.test/x" })),
    { url: "http://a.test/x", screenshotUrl: null });
  assert.equal(browserPage("fetch_url", { url: "http://a.test/" }), null, "other tools have no page");
  assert.equal(browserPage("browser_action", "not json"), null);
  assert.equal(browserPage("browser_action", { error: "refused" }), null);
  assert.equal(browserPage("browser_action", { url: "http://a.test/", screenshot: { url: "https://evil.test/x.png" } }).screenshotUrl,
    null, "only the chat API's own screenshot URLs are shown");
});

test("a live tool_result and a stored call's content give the card the same page", () => {
  const run = newRun("r1");
  applyFrame(run, { id: 1, data: JSON.stringify({ type: "tool_call", id: "t1", name: "browser_action", arguments: { action: "screenshot" } }) });
  applyFrame(run, { id: 2, data: JSON.stringify({ type: "tool_result", toolCallId: "t1", name: "browser_action", success: true,
    result: { url: "http://a.test/", screenshot: { url: shot } }, resultPreview: "Result: took a screenshot" }) });
  assert.deepEqual(run.tools[0].page, { url: "http://a.test/", screenshotUrl: shot });
  const stored = JSON.stringify({ url: "http://a.test/", screenshot: { url: shot } });
  assert.deepEqual(browserPage("browser_action", stored), run.tools[0].page);
});
