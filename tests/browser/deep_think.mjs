// Deep Think: a switch beside the Tools switch; the plan's title and each sub-task with its
// state (waiting, running, done, failed); the synthesis streaming as the answer; the saved
// report opening as an artifact, before and after a reload. The upstream (tests/api/browser.rs)
// plans three sub-tasks, finds something for two, fails the third and writes the report.
import { scenario, signIn, send, screenshot, assert, axe, until, waitForAnswer, waitIdle } from "./lib.mjs";

const REPORT = /^Open report \(deep-think-.+\.md\)$/;

/// The states the sub-task list shows, in order: each entry reads "<query> (<state>…)", and a
/// running one may list its research steps below.
async function states(list) {
  const texts = await list.locator(":scope > li").allInnerTexts();
  return texts.map((t) => /\((waiting|running|done|failed|stopped)/.exec(t)?.[1] ?? `unreadable: ${t}`);
}

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const deep = page.getByRole("switch", { name: "Deep Think" });
  assert(!(await deep.isChecked()), "Deep Think is off by default");
  await deep.check();
  assert(!(await page.getByRole("switch", { name: "Tools" }).isChecked()), "Deep Think does not need the Tools switch");
  await axe(page, "settings with Deep Think");
  await screenshot(page, "settings");

  await send(page, "Compare Rust web servers");
  // The live answer's panel: the plan's title, then its three sub-tasks.
  const panel = page.getByRole("region", { name: "Deep Think" });
  await panel.getByRole("heading", { name: "Deep Think: Rust web servers" }).waitFor();
  const live = panel.getByRole("list", { name: "Sub-tasks" });
  await until("three sub-tasks listed", async () => (await states(live)).length === 3);
  const first = await states(live);
  assert(first.every((s) => ["waiting", "running", "done", "failed"].includes(s)), `each sub-task says its state in words: ${first}`);
  assert(first.includes("waiting") || first.includes("running"), `the research is under way when the plan shows: ${first}`);
  await screenshot(page, "plan");

  // The report streams in as the answer.
  await waitForAnswer(page, "Actix is fast");
  await waitForAnswer(page, "Axum is ergonomic.");
  await waitIdle(page);
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  await answer.getByRole("heading", { name: "Rust web servers", level: 1 }).waitFor();

  // The finished answer keeps the plan, folded: two sub-tasks done, one failed.
  const summary = answer.getByText(/^Deep Think: .*\(3 sub-tasks: 2 done, 1 failed\)$/);
  await summary.waitFor();
  await summary.click();
  const final = await states(answer.getByRole("list", { name: "Sub-tasks" }));
  assert(final.length === 3, `three sub-tasks: ${final}`);
  assert(final.join() === "done,done,failed", `two done, the third failed: ${final}`);

  // The saved report opens as an artifact.
  await answer.getByRole("button", { name: REPORT }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("heading", { name: "Rust web servers", level: 1 }).waitFor();
  await dialog.getByText("Axum is ergonomic.").waitFor();
  await axe(page, "report dialog");
  await screenshot(page, "report");
  await dialog.getByRole("button", { name: "Close" }).click();
  await dialog.waitFor({ state: "detached" });
  await axe(page, "conversation after Deep Think");
  await screenshot(page, "done");

  // After a reload the answer and its report are the stored message's.
  await page.reload();
  await waitForAnswer(page, "Actix is fast");
  const stored = page.getByRole("article", { name: "Assistant" }).last();
  // The run read no source, so the stored report keeps no citation of one.
  assert(!(await stored.innerText()).includes("[1]"), "a citation of a source the run never saw is removed");
  const open = stored.getByRole("button", { name: REPORT });
  await open.waitFor();
  await open.click();
  await page.getByRole("dialog").getByRole("heading", { name: "Rust web servers", level: 1 }).waitFor();
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  assert(await page.getByRole("switch", { name: "Deep Think" }).isChecked(), "the switch is remembered");

  // Narrow screens: nothing scrolls sideways.
  await page.setViewportSize({ width: 375, height: 740 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 375 px (${overflow})`);
  await screenshot(page, "after-reload-375px");
});
