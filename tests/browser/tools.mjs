// Point 6: the Tools switch, the research tools to allow and the iteration limit in the chat
// settings; live progress ("Calculating …") while the run works; per answer a collapsible list
// of its tool calls with result previews and errors.
import { scenario, signIn, send, screenshot, assert, until, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const tools = page.getByRole("switch", { name: "Tools" });
  assert(!(await tools.isChecked()), "tools are off by default");
  assert(await page.getByRole("checkbox", { name: "Calculator" }).isDisabled(), "choices wait for the switch");
  await tools.check();
  await page.getByRole("checkbox", { name: "Calculator" }).check();
  await page.getByRole("checkbox", { name: "Web search" }).uncheck();
  await page.getByRole("spinbutton", { name: "Tool rounds per answer (1–8)" }).fill("3");
  await page.getByRole("spinbutton", { name: "Tool rounds per answer (1–8)" }).press("Tab");
  await screenshot(page, "settings");

  await send(page, "What is 2^10?");
  await page.getByRole("status").filter({ hasText: "Calculating 2^10…" }).waitFor();
  await screenshot(page, "progress");
  await waitForAnswer(page, "2^10 is 1024.");
  await waitIdle(page);
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  const summary = answer.getByText("2 tool calls, 1 failed");
  await summary.waitFor();
  await summary.click();
  await answer.getByText("1024").first().waitFor();
  await answer.getByText(/Error: .*(division|zero|divide)/i).waitFor();
  await screenshot(page, "tool-calls");

  // Settings are the chat's: still there after a reload.
  await page.reload();
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  assert(await page.getByRole("switch", { name: "Tools" }).isChecked(), "the switch is remembered");
  assert((await page.getByRole("spinbutton", { name: "Tool rounds per answer (1–8)" }).inputValue()) === "3", "the limit is remembered");
  // The answer's tool calls are recorded on the server: the list is back after the reload.
  const reloaded = page.getByRole("article", { name: "Assistant" }).filter({ hasText: "2^10 is 1024." });
  const again = reloaded.getByText("2 tool calls, 1 failed");
  await again.waitFor();
  await again.click();
  await reloaded.getByText("calculator").first().waitFor();
  await reloaded.getByText(/Error: .*(division|zero|divide)/i).waitFor();
  await until("the arguments shown after the reload", async () => (await reloaded.locator(".tool-args").first().innerText()).includes("2^10"));
  await screenshot(page, "tool-calls-after-reload");
  await send(page, "Once more");
  await waitForAnswer(page, "With tools at 1 round, here is my answer.");
});
