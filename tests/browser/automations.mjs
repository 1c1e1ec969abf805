// Issue 33, the automations page: reached from the sidebar, it lists the reader's workflows
// with their steps and schedules with their next firing; a schedule is paused (saying so),
// resumed, and deleted after a confirmation. The Rust side made them over the API and checks
// what the page did. A schedule that fired once (then paused) is resumed and its chat opened
// from the page: the firing is a run whose answer lists the workflow's steps, and the next
// firings appear as they happen, without a reload.
import { scenario, signIn, screenshot, assert, axe, until } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Automations" }).click();
  await page.getByRole("heading", { name: "Automations", level: 1 }).waitFor();
  assert(new URL(page.url()).pathname === "/automations", `the page has its URL: ${page.url()}`);

  const workflows = page.getByRole("list", { name: "Your workflows" });
  const steps = workflows.getByRole("list", { name: "Steps of Morning digest" });
  await steps.getByText("sum: tool calculator").waitFor();
  await steps.getByText(/say: prompt “Explain/).waitFor();

  const schedules = page.getByRole("list", { name: "Your schedules" });
  const item = schedules.getByRole("listitem", { name: "Weekday digest" });
  await item.getByText("0 9 * * 1-5 (Europe/Paris)").waitFor();
  await item.getByText(/^Next firing: /).waitFor();
  await item.getByText("Last outcome: not fired yet").waitFor();
  await axe(page, "automations");
  await screenshot(page, "listed");

  await item.getByRole("button", { name: "Pause Weekday digest" }).click();
  await item.getByText("Paused: paused by its owner").waitFor();
  await item.getByRole("button", { name: "Resume Weekday digest" }).click();
  await item.getByText(/^Next firing: /).waitFor();

  // Reloaded, the page is still the automations page.
  await page.reload();
  await page.getByRole("heading", { name: "Automations", level: 1 }).waitFor();

  await page.getByRole("button", { name: "Delete Weekday digest" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await item.waitFor({ state: "detached" });
  await screenshot(page, "deleted");

  // The schedule that fired: its chat shows the firing as a run, with the workflow's steps.
  const fired = page.getByRole("list", { name: "Your schedules" }).getByRole("listitem", { name: "Sums each second" });
  await fired.getByText(/^Last outcome: succeeded/).waitFor();
  await fired.getByRole("button", { name: "Resume Sums each second" }).click();
  await fired.getByText(/^Next firing: /).waitFor();
  await fired.getByRole("link", { name: "Open the chat of Sums each second" }).click();
  const answer = page.getByRole("article", { name: "Assistant" }).first();
  const ran = answer.getByRole("list", { name: "Steps of the workflow Sums" });
  await ran.getByRole("listitem").filter({ hasText: /^one: tool calculator — done in \d+ ms/ }).waitFor();
  await ran.getByRole("listitem").filter({ hasText: /^two: tool calculator — done in \d+ ms/ }).waitFor();
  await answer.getByText("42").first().waitFor();
  // The schedule fires every second: the page shows the next firings' runs as they come.
  const runs = page.getByRole("list", { name: "Steps of the workflow Sums" });
  const shown = await runs.count();
  await until("a firing shown as it happens, without a reload", async () => (await runs.count()) > shown + 1);
  await axe(page, "a schedule's chat");
  await screenshot(page, "firing");
});
