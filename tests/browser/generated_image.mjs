// Issue 47: a picture the Responses API's image_generation tool made in a chat is shown with the
// answer in the app (kept as the chat's attachment), and opens in full.
import { scenario, signIn, screenshot, assert, axe } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.goto(`/c/${process.env.CHAT_ID}`);
  const answer = page.getByRole("article", { name: "Assistant" });
  await answer.getByText("Here is your lighthouse.").waitFor();
  const picture = answer.getByRole("img", { name: "Generated image 1 of 1" });
  await picture.waitFor();
  const drawn = await picture.evaluate(async (img) => {
    if (!img.complete) await new Promise((done) => img.addEventListener("load", done, { once: true }));
    return img.naturalWidth;
  });
  assert(drawn === 1, `the picture is drawn from the chat's attachment (width ${drawn})`);
  const link = await answer.locator(".message-images a").getAttribute("href");
  assert(/\/chat\/api\/[^/]+\/attachments\//.test(link), `the picture opens in full: ${link}`);
  await axe(page, "generated image");
  await screenshot(page, "generated-image");
  // On a phone, in the dark theme.
  await page.setViewportSize({ width: 375, height: 812 });
  await page.emulateMedia({ colorScheme: "dark" });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert(wide <= 375, `nothing scrolls sideways on a phone (${wide} px)`);
  await axe(page, "generated-image (phone, dark)");
  await screenshot(page, "generated-image-phone-dark");
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: "light" });
});
