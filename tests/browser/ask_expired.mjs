// Point 7: a question that expired before anyone answered it says so after a reload, and no
// longer offers its options.
import { scenario, signIn, screenshot, assert, until } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.goto(`/c/${process.env.CHAT_ID}`);
  const card = page.getByRole("group", { name: "Which port?" });
  await card.getByText("This question expired before it was answered.").waitFor();
  await until("the options to be gone", async () => (await card.getByRole("button", { name: "8080" }).count()) === 0);
  assert((await card.getByRole("button", { name: "Send answer" }).count()) === 0, "an expired card takes no answer");
  await screenshot(page, "expired-card");
});
