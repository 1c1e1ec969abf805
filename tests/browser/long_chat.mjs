// Issue 21, point 3 in the UI: a chat's context strategy is chosen in its settings (before the
// chat exists, or later), kept by the server, and an answer says when older messages no
// longer fit the model's context and were summarised.
import { scenario, signIn, send, screenshot, assert, until, waitIdle } from "./lib.mjs";

const words = ["the", "model", "reads", "every", "message", "before", "it", "answers"];
const prose = (n) => Array.from({ length: n }, (_, i) => words[i % words.length]).join(" ");

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const strategy = page.getByRole("combobox", { name: "When the conversation no longer fits the model's context" });
  assert((await strategy.inputValue()) === "drop", "leaving out is the default");
  await strategy.selectOption("summarize");
  await page.getByRole("button", { name: "Settings", exact: true }).click();

  for (let turn = 0; turn < 4; turn++) {
    await send(page, `question ${turn}: ${prose(700)}`);
    // textContent, not innerText: these messages are so long that an answer may be laid out
    // below the fold (content-visibility), where innerText is empty.
    await until(`answer ${turn}`, async () =>
      (await page.getByRole("article", { name: "Assistant" }).allTextContents()).some((t) => t.includes(`answer ${turn}.`)));
    await waitIdle(page);
  }
  const last = page.getByRole("article", { name: "Assistant" }).filter({ hasText: "answer 3." });
  await until("the note that older messages were summarised", async () =>
    /did not fit the model's context; the model was given a summary of them instead/.test(await last.textContent()));
  const jump = page.getByRole("button", { name: "Latest", exact: true });
  assert(await jump.isHidden(), "long messages laid out late do not unpin the view from the latest answer");
  await screenshot(page, "summarised");

  // The choice is the chat's, on the server: a reload shows it, and it can be changed back.
  await page.reload();
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  await until("the stored strategy", async () => (await strategy.inputValue()) === "summarize");
  await strategy.selectOption("drop");
  await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
});
