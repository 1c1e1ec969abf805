// Point 4: Stop cancels the run on the server and the partial answer stays; reloading mid-reply
// re-attaches to the running stream and shows the rest with nothing lost or doubled; the
// auto-scroll follows the reply until the reader scrolls up.
import { scenario, signIn, send, screenshot, assert, until, waitIdle } from "./lib.mjs";

const expected = process.env.EXPECTED.replace(/\s+/g, " ");
const flat = (text) => text.replace(/\s+/g, " ");

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Count slowly");
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  await until("some words", async () => flat(await answer.innerText()).includes("w5 "));
  await page.getByRole("button", { name: "Stop" }).click();
  await waitIdle(page);
  await page.getByText("You stopped this answer.").waitFor();
  const kept = await until("the partial answer to stay", async () => {
    const text = flat(await page.getByRole("article", { name: "Assistant" }).last().innerText());
    return text.includes("w1 w2 w3 w4 w5") && text;
  });
  assert(!kept.includes("w60"), "it was stopped before the end");
  await page.reload();
  await page.getByText("You stopped this answer.").waitFor();
  await until("the partial answer, kept on the server", async () =>
    flat(await page.getByRole("article", { name: "Assistant" }).last().innerText()).includes("w1 w2 w3 w4 w5"));
  await screenshot(page, "stopped");

  // The second answer streams slowly; reload in the middle of it.
  await send(page, "Count slowly again");
  const words = async () => flat(await page.getByRole("article", { name: "Assistant" }).last().innerText());
  await until("the reply to start", async () => (await words()).includes("w3 "));
  await page.reload();
  await page.getByRole("button", { name: "Stop" }).waitFor();
  await until("the reply to go on after the reload", async () => (await words()).includes("w20 "));
  await screenshot(page, "reattached");
  // Scrolling up stops the pull to the bottom while words keep arriving.
  await page.setViewportSize({ width: 900, height: 400 });
  const scroller = page.locator(".scroller");
  // The reader scrolls up with the mouse wheel (only the reader's own scrolling unpins it).
  await scroller.hover();
  await page.mouse.wheel(0, -200);
  await page.getByRole("button", { name: "Latest", exact: true }).waitFor();
  const before = await scroller.evaluate((el) => el.scrollTop);
  await until("more words", async () => (await words()).includes("w30 "));
  const after = await scroller.evaluate((el) => el.scrollTop);
  assert(Math.abs(after - before) < 2, `the reader was not pulled down (${before} → ${after})`);
  await waitIdle(page);
  const text = await until("the whole answer", async () => {
    const shown = await words();
    return shown.includes(expected) && shown;
  });
  const count = text.split(" ").filter((w) => w === "w1").length;
  assert(count === 1, `no doubled words (w1 ×${count})`);
  // A second device (a fresh page) sees the same answer.
  await page.reload();
  await until("the answer stored in full", async () => (await words()).includes(expected));
});
