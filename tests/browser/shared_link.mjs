// Issue 50 point 5: the owner makes a read-only link from the chat header's Share dialog; a
// fresh, signed-out browser opens it and sees the chat (the messages, an artifact that opens
// read-only) with no composer, chat list or settings; after the owner revokes it in the same
// dialog the link answers 404. axe checks the dialog and the shared page in both themes;
// screenshots of the shared page at 375 and 1280 px wide.
import { scenario, signIn, screenshot, assert, until, axe, waitForAnswer, BASE } from "./lib.mjs";

const CHAT = process.env.CHAT_ID;

/// A signed-out page in its own browser context (no cookie, no storage), reporting its errors.
async function visitor(browser, { width, colorScheme }) {
  const context = await browser.newContext({ baseURL: BASE, viewport: { width, height: 812 }, colorScheme });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const problems = [];
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/status of 404/.test(msg.text())) problems.push(`console error: ${msg.text()}`);
  });
  return { context, page, problems };
}

/// The shared page shows the chat and nothing of the app around it.
async function seesTheChat(page) {
  await page.getByRole("heading", { level: 1, name: "Shared in the browser" }).waitFor();
  await until("the answer", async () =>
    (await page.getByRole("article", { name: "Assistant" }).allInnerTexts()).some((t) => t.includes("the itinerary")));
  const asked = await page.getByRole("article", { name: "You" }).allInnerTexts();
  assert(asked.some((t) => t.includes("Plan a day in Lisbon")), `the question: ${asked}`);
  for (const [role, name] of [["textbox", "Message"], ["button", "Send"], ["button", "Show chats"], ["button", "Settings"],
    ["button", "Edit"], ["button", "Regenerate"], ["button", "Share"], ["link", "New chat"], ["button", "New chat"]]) {
    assert(await page.getByRole(role, { name, exact: true }).count() === 0, `no ${role} "${name}" on the shared page`);
  }
}

await scenario(async ({ page, browser }) => {
  await signIn(page);
  await page.goto(`/c/${CHAT}`);
  await waitForAnswer(page, "the itinerary");

  // The owner makes a link.
  const share = page.getByRole("button", { name: "Share", exact: true });
  if (!(await share.isVisible())) await page.getByRole("button", { name: "More actions" }).click();
  await share.click();
  const dialog = page.getByRole("dialog", { name: "Share this chat" });
  await dialog.waitFor();
  await dialog.getByText("No links yet.").waitFor();
  await dialog.getByRole("button", { name: "Create link" }).click();
  const address = dialog.getByRole("textbox", { name: "New link (shown only now)" });
  await address.waitFor();
  const url = await address.inputValue();
  assert(new URL(url).pathname.startsWith("/s/cqshr_"), `a link: ${url}`);
  await dialog.getByRole("button", { name: "Revoke link 1" }).waitFor();
  await axe(page, "the share dialog");
  await screenshot(page, "share-dialog");

  // A stranger opens it, signed out, in both themes and at both widths.
  for (const [width, colorScheme] of [[1280, "light"], [375, "dark"], [375, "light"], [1280, "dark"]]) {
    const stranger = await visitor(browser, { width, colorScheme });
    const response = await stranger.page.goto(url);
    assert(response.status() === 200, `the link opens: ${response.status()}`);
    assert(!(await stranger.context.cookies()).length, "no cookie is set");
    await seesTheChat(stranger.page);
    await axe(stranger.page, `the shared page at ${width} px, ${colorScheme}`);
    await screenshot(stranger.page, `shared-${width}-${colorScheme}`);
    if (width === 1280 && colorScheme === "light") {
      await stranger.page.getByRole("button", { name: "Open Itinerary" }).click();
      const viewer = stranger.page.getByRole("dialog", { name: /Itinerary/ });
      await viewer.getByText("The museum opens at nine.").waitFor();
      await axe(stranger.page, "an artifact opened on the shared page");
      await screenshot(stranger.page, "shared-artifact");
      await viewer.getByRole("button", { name: "Close" }).click();
      await until("the artifact closed", async () => (await stranger.page.getByRole("dialog").count()) === 0);
    }
    assert(stranger.problems.length === 0, stranger.problems.join("\n"));
    await stranger.context.close();
  }

  // The owner revokes it; the link answers 404 and the page says so.
  await dialog.getByRole("button", { name: "Revoke link 1" }).click();
  await dialog.getByText("Link revoked: it no longer opens.").waitFor();
  await dialog.getByText("No links yet.").waitFor();
  await dialog.getByRole("button", { name: "Close" }).click();

  const late = await visitor(browser, { width: 1280, colorScheme: "light" });
  const gone = await late.page.goto(url);
  assert(gone.status() === 404, `a revoked link answers 404, not ${gone.status()}`);
  await late.page.getByRole("heading", { level: 1, name: "Link not found" }).waitFor();
  await late.page.getByText("was revoked").waitFor();
  const json = await late.page.request.get(`/shared/${new URL(url).pathname.slice(3)}`);
  assert(json.status() === 404, `the JSON answers 404 too: ${json.status()}`);
  await axe(late.page, "a revoked link's page");
  await screenshot(late.page, "revoked");
  await late.context.close();
});
