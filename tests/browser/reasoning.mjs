// Issue 30, point 3: a model's reasoning, apart from its answer. While the model thinks, the
// answer shows "Thinking…", open, with the thoughts streaming; when the answer starts it folds
// into "Thought for N s" above the answer, whose text holds none of the thoughts; a reload
// shows the same folded block from the stored message, and it opens to show them.
import { scenario, signIn, send, screenshot, assert, until, waitForAnswer, waitIdle, axe } from "./lib.mjs";

const THOUGHT = "Rayleigh scattering";
const ANSWER = "Because short blue waves scatter the most.";

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Why is the sky blue?");

  // Streaming: open, and the thoughts arrive.
  const thinking = page.getByRole("button", { name: "Thinking…", exact: true });
  await thinking.waitFor();
  assert((await thinking.getAttribute("aria-expanded")) === "true", "open while it streams");
  const live = page.getByRole("article", { name: "Assistant" }).last();
  await until("the thoughts streaming into the open block", async () =>
    (await live.getByRole("region", { name: "Reasoning" }).innerText()).includes("Sunlight"));
  await screenshot(page, "thinking");

  // The answer: the block folds, above the answer, labelled with the time.
  await waitForAnswer(page, ANSWER);
  await waitIdle(page);
  const answer = page.getByRole("article", { name: "Assistant" }).filter({ hasText: ANSWER });
  const folded = answer.getByRole("button", { name: /^Thought for \d+ s$/ });
  await folded.waitFor();
  assert((await folded.getAttribute("aria-expanded")) === "false", "folded after the answer");
  const text = await answer.innerText();
  assert(!text.includes(THOUGHT), `the thoughts are folded away and not in the answer: ${text}`);
  const block = answer.getByRole("region", { name: "Reasoning" });
  const [above, below] = [await block.boundingBox(), await answer.getByText(ANSWER).boundingBox()];
  assert(above.y < below.y, "the reasoning is above the answer");
  await screenshot(page, "folded");

  // After a reload: the same folded block, from the stored message; it opens and closes.
  await page.reload();
  const stored = page.getByRole("article", { name: "Assistant" }).filter({ hasText: ANSWER });
  const again = stored.getByRole("button", { name: /^Thought for \d+ s$/ });
  await again.waitFor();
  assert((await again.getAttribute("aria-expanded")) === "false", "folded after a reload");
  assert(!(await stored.innerText()).includes(THOUGHT), "the thoughts start hidden");
  await again.click();
  assert((await again.getAttribute("aria-expanded")) === "true", "the button opens it");
  await until("the thoughts shown", async () => (await stored.innerText()).includes(THOUGHT));
  await screenshot(page, "opened-after-reload");
  await axe(page, "an answer with its reasoning open");
  await again.click();
  await until("the thoughts folded again", async () => !(await stored.innerText()).includes(THOUGHT));
});
