// Point 1: `/` serves the UI; a signed-out visitor gets the sign-in page, never JSON; every
// asset comes from Colloquy under a CSP that nothing on the page violates.
import { scenario, screenshot, assert, BASE, until } from "./lib.mjs";

await scenario(async ({ page }) => {
  const foreign = [];
  page.on("request", (req) => {
    if (!req.url().startsWith(BASE) && !req.url().startsWith("data:")) foreign.push(req.url());
  });
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const response = await page.goto("/");
  assert(response.headers()["content-security-policy"]?.includes("script-src 'self'"), "the page has a CSP");
  await page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  await page.getByLabel("Username").waitFor();
  await screenshot(page, "sign-in");
  // A deep link, signed out: the sign-in page too.
  await page.goto("/c/some-chat-id");
  await page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  const body = await page.locator("body").innerText();
  assert(!body.includes('"error"'), "no JSON shown");
  await until("no CSP violations", async () => (await page.evaluate(() => window.__violations)).length === 0 || Promise.reject(new Error(JSON.stringify(await page.evaluate(() => window.__violations)))), 1000);
  assert(foreign.length === 0, `everything is served by Colloquy, not ${foreign.join(", ")}`);
  // Nothing inline: every script element has a same-origin src.
  const inline = await page.evaluate(() => [...document.scripts].filter((s) => !s.src).length);
  assert(inline === 0, "no inline scripts");
});
