// Point 8: no serious or critical axe-core violations on the sign-in, chat list and
// conversation screens; every control reachable by keyboard; usable at 375 px; light and dark
// themes follow the system; at most 300 KB of compressed JavaScript before lazy parts.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scenario, screenshot, assert, axe, until, LOGIN_URL, waitForAnswer, waitIdle } from "./lib.mjs";

const STATE = join(tmpdir(), `colloquy-quality-${process.pid}.json`);

// Dark theme, sign-in and the conversation, by keyboard only.
await scenario(async ({ page }) => {
  await page.goto("/");
  await page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert(dark === "rgb(22, 24, 29)", `the dark theme follows the system (${dark})`);
  await axe(page, "sign-in (dark)");
  await screenshot(page, "sign-in-dark");

  // The JavaScript the conversation screen loads before anything lazy, measured as served
  // compressed (the browser may take it from its cache, so ask the server for the sizes).
  const scripts = new Set();
  page.on("request", (request) => {
    if (request.resourceType() === "script") scripts.add(request.url());
  });
  await page.goto(LOGIN_URL);
  await page.getByRole("button", { name: "New chat" }).waitFor();
  await page.waitForLoadState("networkidle");
  let total = 0;
  for (const url of scripts) {
    const response = await fetch(url, { headers: { "accept-encoding": "br, gzip" } });
    assert(response.headers.get("content-encoding"), `${url} is served compressed`);
    total += Number(response.headers.get("content-length"));
  }
  console.log(`first load: ${scripts.size} scripts, ${total} bytes compressed`);
  assert(scripts.size > 0 && total > 0 && total <= 300 * 1024, `at most 300 KB of compressed JavaScript on first load (${total})`);

  // Keyboard only: the composer is focused; type, Enter, the answer arrives.
  await page.keyboard.type("Hello by keyboard");
  await page.keyboard.press("Enter");
  await waitForAnswer(page, "A short answer with code.");
  await waitIdle(page);
  await axe(page, "conversation (dark)");
  await screenshot(page, "conversation-dark");
  // Tab reaches the chat list's controls and the composer.
  const reached = new Set();
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press("Tab");
    reached.add(await page.evaluate(() => document.activeElement?.getAttribute("aria-label") || document.activeElement?.textContent?.trim()));
  }
  for (const name of ["New chat", "Sign out", "Message", "Settings", "Regenerate"]) {
    assert(reached.has(name), `Tab reaches ${name}: ${[...reached].join(" | ")}`);
  }
  await page.context().storageState({ path: STATE });
}, { colorScheme: "dark" });

// Light theme at 375 px on a touch device: Enter adds a line; the chat list is a drawer.
await scenario(async ({ page }) => {
  await page.goto("/");
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert(light === "rgb(255, 255, 255)", `the light theme (${light})`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 375 px (${overflow})`);
  await page.getByRole("button", { name: "Show chats" }).click();
  await page.getByRole("link", { name: /Hello by keyboard/ }).click();
  await waitForAnswer(page, "A short answer with code.");
  await axe(page, "conversation (375 px)");
  const box = page.getByRole("textbox", { name: "Message" });
  await box.tap();
  await box.type("one");
  await box.press("Enter");
  await box.type("two");
  assert((await box.inputValue()) === "one\ntwo", "on touch devices Enter adds a line");
  await screenshot(page, "mobile");
  await page.getByRole("button", { name: "Show chats" }).click();
  await page.getByRole("button", { name: "New chat" }).waitFor();
  await axe(page, "chat list (375 px)");
  await screenshot(page, "mobile-chats");
}, { viewport: { width: 375, height: 740 }, hasTouch: true, isMobile: true, storageState: STATE });
