// Issue 34, point 6: a browser tool's card shows the page it visited and the screenshot it
// took, as a thumbnail that opens the full image. The Rust test ran the turn (a screenshot of
// PAGE_URL) before the page opens the chat, so the card is drawn from the stored record.
import { scenario, signIn, screenshot, assert, axe, waitForAnswer } from "./lib.mjs";

await scenario(async ({ page }) => {
  const pageUrl = process.env.PAGE_URL;
  await signIn(page);
  await page.goto(`/c/${process.env.CHAT_ID}`);
  await waitForAnswer(page, "It shows an order form.");
  const answer = page.getByRole("article").last();
  await answer.getByText("1 tool call").click();
  await answer.getByRole("link", { name: pageUrl, exact: true }).waitFor();
  const thumbnail = answer.getByRole("img", { name: `Screenshot of ${pageUrl}` });
  await thumbnail.waitFor();
  const width = await thumbnail.evaluate(async (img) => {
    await img.decode().catch(() => {});
    return img.naturalWidth;
  });
  assert(width > 0, `the thumbnail is a loaded image (naturalWidth ${width})`);
  const full = answer.getByRole("link", { name: `Open the full screenshot of ${pageUrl}` });
  const href = await full.getAttribute("href");
  assert(/^\/chat\/api\/[^/]+\/screenshots\/shot_[0-9a-f]+$/.test(href), `the full image's URL: ${href}`);
  const served = await page.request.get(href);
  assert(served.ok() && served.headers()["content-type"] === "image/png", `the full image is a PNG (${served.status()})`);
  await axe(page, "browser tool card");
  await screenshot(page, "browser-tool-card");
});
