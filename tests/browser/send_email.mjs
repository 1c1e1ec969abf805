// Issue 32: a send_email confirmation is a confirm card that shows the email as it would go —
// sender, recipient, subject and the body with its line breaks — and "Yes" sends it.
import { scenario, signIn, screenshot, assert, axe, waitForAnswer } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.goto(`/c/${process.env.CHAT_ID}`);
  const card = page.getByRole("group", { name: "Send this email to ops@example.org?" });
  await card.waitFor();
  await card.getByText("The assistant wants to send an email").waitFor();
  const email = card.getByRole("definition");
  const shown = await email.allInnerTexts();
  for (const expected of ["Colloquy <colloquy@example.org>", "ops@example.org", "Disk full on db-1"]) {
    assert(shown.includes(expected), `the card shows ${expected}: ${JSON.stringify(shown)}`);
  }
  const body = await card.locator("pre").innerText();
  assert(body === "The disk on db-1 is full.\nPlease free some space.", `the body keeps its lines: ${JSON.stringify(body)}`);
  await axe(page, "email confirmation");
  await screenshot(page, "email-card");
  await card.getByRole("button", { name: "Yes" }).click();
  await waitForAnswer(page, "I sent the email.");
  await page.getByRole("group", { name: "Send this email to ops@example.org?" }).getByText("Your answer: Yes").waitFor();
  await screenshot(page, "email-sent");
});
