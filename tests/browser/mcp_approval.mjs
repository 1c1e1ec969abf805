// Issue 47: an MCP call that waits for approval (from a Responses request with
// require_approval "always") is a confirm card in the chat that shows the server, the tool and
// its arguments as they would go; "Yes" makes the call and the answer goes on.
import { scenario, signIn, screenshot, assert, axe, waitForAnswer } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.goto(`/c/${process.env.CHAT_ID}`);
  const card = page.getByRole("group", { name: /Allow the MCP server tests to run add/ });
  await card.waitFor();
  await card.getByText("The assistant wants to use a tool of an MCP server").waitFor();
  const shown = await card.getByRole("definition").allInnerTexts();
  for (const expected of ["tests", "add"]) {
    assert(shown.includes(expected), `the card shows ${expected}: ${JSON.stringify(shown)}`);
  }
  const args = JSON.parse(await card.locator("pre").innerText());
  assert(args.a === 2 && args.b === 40, `the card shows the arguments: ${JSON.stringify(args)}`);
  await axe(page, "MCP approval");
  await screenshot(page, "mcp-approval-card");
  // On a phone, in the dark theme.
  await page.setViewportSize({ width: 375, height: 812 });
  await page.emulateMedia({ colorScheme: "dark" });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert(wide <= 375, `nothing scrolls sideways on a phone (${wide} px)`);
  await axe(page, "mcp-approval-card (phone, dark)");
  await screenshot(page, "mcp-approval-card-phone-dark");
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: "light" });
  await card.getByRole("button", { name: "Yes" }).click();
  await waitForAnswer(page, "2 + 40 = 42.");
  await page.getByRole("group", { name: /Allow the MCP server tests to run add/ }).getByText("Your answer: Yes").waitFor();
  await screenshot(page, "mcp-approved");
});
