import { test } from "node:test";
import assert from "node:assert/strict";
import { optInChoices, about } from "../src/conversation/optin.js";
import { modelOptions, toolAbout } from "../src/agents/form.js";

const catalog = {
  tools: [
    { name: "web_search", summary: "Searches the web.", needs: "a search engine", available: true, opt_in: true },
    { name: "fetch_url", summary: "Reads a web page's text.", needs: null, available: true, opt_in: true },
    { name: "calculator", summary: "Does exact arithmetic.", needs: null, available: true, opt_in: true },
    { name: "create_artifact", summary: "Creates documents.", needs: null, available: true, opt_in: false },
    { name: "code_interpreter", summary: "Runs Python.", needs: "a sandbox", available: true, opt_in: true },
    { name: "wiki_lookup", summary: "Looks a word up.", needs: null, available: true, opt_in: true },
  ],
  unavailable: [
    { name: "browser_action", summary: "Drives a browser.", needs: "Chromium", available: false, reason: "Chromium was not found", opt_in: true },
    { name: "analyze_page", summary: "Drives a browser.", needs: "Chromium", available: false, reason: "Chromium was not found", opt_in: false },
  ],
};

test("before the catalog loads, the known opt-in tools show, every one allowed", () => {
  const choices = optInChoices(null, null);
  assert.deepEqual(choices.map((c) => c.label), ["Web search", "Read web pages", "GitHub code search", "GitLab code search", "Calculator", "Browser", "Code interpreter (Python)"]);
  assert.ok(choices.every((c) => c.available && c.allowed && c.about === ""));
});

test("the catalog's opt-in tools show with what they need; one the server lacks says why", () => {
  const choices = optInChoices(catalog, null);
  assert.deepEqual(choices.map((c) => c.name), ["web_search", "fetch_url", "calculator", "browser_action", "code_interpreter", "wiki_lookup"],
    "code search the server does not have, and the chat's own tools, are not choices; an opt-in tool with no label comes last");
  const browser = choices.find((c) => c.name === "browser_action");
  assert.equal(browser.label, "Browser");
  assert.equal(browser.available, false);
  assert.equal(browser.reason, "Chromium was not found");
  assert.equal(browser.about, "Drives a browser. Needs Chromium.");
  assert.equal(choices.find((c) => c.name === "wiki_lookup").label, "wiki_lookup");
  assert.equal(about({ summary: "Does exact arithmetic.", needs: null }), "Does exact arithmetic.");
});

test("a tool the chat's agent does not allow is marked", () => {
  const choices = optInChoices(catalog, ["calculator"]);
  assert.deepEqual(choices.filter((c) => c.allowed).map((c) => c.name), ["calculator"]);
});

test("the agent form's model list: the default, each model (a down server's disabled) and the agent's own", () => {
  const models = [{ id: "fake-model", available: true }, { id: "far-model", available: false }];
  assert.deepEqual(modelOptions(models, null), [
    { value: "", label: "Default model", disabled: false },
    { value: "fake-model", label: "fake-model", disabled: false },
    { value: "far-model", label: "far-model (server unavailable)", disabled: true },
  ]);
  assert.equal(modelOptions(models, "far-model")[2].disabled, false, "an agent's own model stays choosable");
  assert.deepEqual(modelOptions(models, "gone-model").at(-1), { value: "gone-model", label: "gone-model (not offered now)", disabled: false });
});

test("the agent form describes each tool with what it needs and why it is missing", () => {
  assert.equal(toolAbout({ summary: "Runs read-only SQL queries on a database.", needs: "a database", available: true }),
    "Runs read-only SQL queries on a database. Needs a database.");
  assert.equal(toolAbout({ summary: "Sends email.", needs: "SMTP", available: false, reason: "not configured on this server" }),
    "Sends email. Needs SMTP. Not available here: not configured on this server.");
  assert.equal(toolAbout({ description: "Looks a word up. Then more.", needs: null }), "Looks a word up.");
});

test("an answer headlines its browser calls' latest page with a screenshot, else the latest page", async () => {
  const { headlinePage } = await import("../src/conversation/browser.js");
  const shot = { url: "http://a/", screenshotUrl: "/chat/api/c/screenshots/shot_ab" };
  const later = { url: "http://b/", screenshotUrl: null };
  assert.equal(headlinePage([{ page: shot }, { page: later }, { page: null }]), shot);
  assert.equal(headlinePage([{ page: later }, { page: null }]), later);
  assert.equal(headlinePage([{ page: null }]), null);
  assert.equal(headlinePage(null), null);
});
