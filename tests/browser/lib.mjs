// Shared by the browser scenarios: a real headless Chromium (Debian's `chromium`, driven by
// playwright-core) against the Colloquy the Rust test started. Elements are found by role and
// accessible name, as a person with a screen reader would find them. Every scenario saves
// screenshots under target/browser-screenshots/ for review.
import { chromium } from "playwright-core";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

export const BASE = process.env.COLLOQUY_URL;
export const LOGIN_URL = process.env.COLLOQUY_LOGIN_URL;
const SHOTS = process.env.SCREENSHOT_DIR ?? "target/browser-screenshots";
mkdirSync(SHOTS, { recursive: true });

export async function launch(options = {}) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
  const context = await browser.newContext({
    baseURL: BASE,
    viewport: options.viewport ?? { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? "light",
    hasTouch: options.hasTouch ?? false,
    isMobile: options.isMobile ?? false,
    permissions: ["clipboard-read", "clipboard-write"],
    storageState: options.storageState,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const problems = [];
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/status of (401|404|409|410)/.test(msg.text())) problems.push(`console error: ${msg.text()}`);
  });
  return { browser, context, page, problems };
}

export async function signIn(page) {
  await page.goto(LOGIN_URL);
  await page.getByRole("button", { name: "New chat" }).waitFor();
}

let shot = 0;
export async function screenshot(page, name) {
  shot++;
  await page.screenshot({ path: join(SHOTS, `${process.env.SCENARIO}-${String(shot).padStart(2, "0")}-${name}.png`), fullPage: false });
}

/// Polls `check` (an async function returning truthy) until it holds, or fails with `what`.
export async function until(what, check, timeout = 15000) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function assert(condition, message) {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/// Fails on serious or critical axe-core violations on what `page` shows now.
export async function axe(page, screen) {
  await page.evaluate(axeSource);
  const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert(bad.length === 0, `${screen}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target).join(" ")}`).join("; ")}`);
}

/// Text of the conversation's messages, in order.
export async function messages(page) {
  return page.getByRole("article").allInnerTexts();
}

export async function send(page, text) {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

export async function waitForAnswer(page, text) {
  await until(`an answer containing ${JSON.stringify(text)}`, async () =>
    (await page.getByRole("article", { name: "Assistant" }).allInnerTexts()).some((t) => t.includes(text)));
}

export async function waitIdle(page) {
  await page.getByRole("button", { name: "Send", exact: true }).waitFor();
}

/// Runs a scenario: `body({page, context, browser})`; reports failures with the page's errors.
export async function scenario(body, options) {
  const session = await launch(options);
  try {
    await body(session);
    if (session.problems.length > 0) throw new Error(`the page reported errors:\n${session.problems.join("\n")}`);
    console.log(`${process.env.SCENARIO}: ok`);
  } catch (err) {
    await screenshot(session.page, "failure").catch(() => {});
    console.error(`${process.env.SCENARIO}: FAILED: ${err.stack ?? err}`);
    console.error(`page: ${session.page.url()}`);
    const text = await session.page.locator("body").innerText().catch(() => "");
    console.error(`page text:\n${text.slice(0, 3000)}`);
    process.exitCode = 1;
  } finally {
    await session.browser.close();
  }
}
