// Issue 50, point 2: a chat turns the browser on in its settings ("Opt-in tools", each tool with
// its description and what it needs), and the answer's browser call shows its page's URL and
// screenshot without unfolding its tool calls — live, and after a reload from the stored
// record. The Rust test opened the chat's browser session at PAGE_URL and scripted the model's
// screenshot call.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

/// The answer's page card: its URL's link and its loaded screenshot, seen with the tool calls folded.
async function seesPageUnfolded(page, pageUrl) {
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  await answer.getByText("1 tool call").waitFor();
  const link = answer.getByRole("link", { name: pageUrl, exact: true });
  await link.waitFor();
  assert(await link.isVisible(), "the page's URL shows without unfolding");
  const folded = await answer.locator("details.tools").evaluate((details) => !details.open);
  assert(folded, "the list of tool calls is still folded");
  const thumbnail = answer.getByRole("img", { name: `Screenshot of ${pageUrl}` });
  await thumbnail.waitFor();
  assert(await thumbnail.isVisible(), "the screenshot shows without unfolding");
  const width = await thumbnail.evaluate(async (img) => {
    await img.decode().catch(() => {});
    return img.naturalWidth;
  });
  assert(width > 0, `the screenshot is a loaded image (naturalWidth ${width})`);
  // Unfolded, the call is listed once, without a second copy of its page.
  await answer.getByText("1 tool call").click();
  await answer.getByText("browser_action", { exact: true }).waitFor();
  assert((await answer.getByRole("link", { name: pageUrl, exact: true }).count()) === 1, "the page is shown once");
  await answer.getByText("1 tool call").click();
}

await scenario(async ({ page }) => {
  const pageUrl = process.env.PAGE_URL;
  await signIn(page);
  await page.goto(`/c/${process.env.CHAT_ID}`);
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  // The header names the chat's agent (the default one), linking to the agents page.
  await page.getByRole("link", { name: /^Agent: / }).waitFor();

  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const optIn = page.getByRole("group", { name: "Opt-in tools" });
  await optIn.waitFor();
  // The default agent lets a chat turn the browser on, and this server has Chromium.
  await page.getByRole("list", { name: "Tools this agent allows:" }).getByText("browser_action", { exact: true }).waitFor();
  await optIn.getByText("Drives a real browser: opens pages, clicks, types and takes screenshots. Needs Chromium.").waitFor();
  await page.getByRole("switch", { name: "Tools" }).check();
  const browser = optIn.getByRole("checkbox", { name: "Browser", exact: true });
  await until("the browser can be chosen", async () => !(await browser.isDisabled()));
  assert(!(await browser.isChecked()), "the browser is off until a chat turns it on");
  // The code interpreter is in the same section, with its checkbox's own name.
  await optIn.getByRole("checkbox", { name: "Code interpreter (Python)" }).waitFor();
  await optIn.getByText("Searches the web and reads the top results. Needs a search engine.").waitFor();
  await browser.check();
  await axe(page, "chat settings, opt-in tools");
  await screenshot(page, "opt-in-tools-1280");
  await page.setViewportSize({ width: 375, height: 812 });
  await axe(page, "chat settings, opt-in tools, 375 px");
  await screenshot(page, "opt-in-tools-375");
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole("button", { name: "Settings", exact: true }).click();

  await send(page, "What is on the menu?");
  await waitForAnswer(page, "The menu has soup.");
  await waitIdle(page);
  await seesPageUnfolded(page, pageUrl);
  await axe(page, "browser call's page, unfolded");
  await screenshot(page, "browser-page-1280");

  // After a reload, from the stored record; and the choice is the chat's, kept.
  await page.reload();
  await waitForAnswer(page, "The menu has soup.");
  await seesPageUnfolded(page, pageUrl);
  await page.setViewportSize({ width: 375, height: 812 });
  await axe(page, "browser call's page, 375 px");
  await screenshot(page, "browser-page-375");
  await page.emulateMedia({ colorScheme: "dark" });
  await axe(page, "browser call's page, 375 px, dark");
  await screenshot(page, "browser-page-375-dark");
  await page.setViewportSize({ width: 1280, height: 800 });
  await axe(page, "browser call's page, dark");
  await screenshot(page, "browser-page-1280-dark");
  await page.emulateMedia({ colorScheme: "light" });
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  await until("the browser still on for this chat", async () =>
    page.getByRole("group", { name: "Opt-in tools" }).getByRole("checkbox", { name: "Browser", exact: true }).isChecked());
});
