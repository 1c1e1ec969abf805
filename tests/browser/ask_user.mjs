// Point 7: ask_user cards of every style (default with options and free text, confirm, rating,
// form with required fields, multi-select); answering resumes the stream in place; a pending
// question shows again after a reload; an answered card shows the answer; a cancelled one says so.
import { scenario, signIn, send, screenshot, assert, until, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Write me an example");
  const card = page.getByRole("group", { name: "Which language?" });
  await card.waitFor();
  await waitIdle(page);
  await screenshot(page, "default-card");
  // Still there after a reload.
  await page.reload();
  await card.waitFor();
  await card.getByRole("button", { name: "Rust" }).click();
  await waitForAnswer(page, "Rust it is.");
  await waitIdle(page);
  await page.getByRole("group", { name: "Which language?" }).getByText("Your answer: Rust").waitFor();

  await send(page, "Now overwrite");
  const confirm = page.getByRole("group", { name: "Overwrite the file?" });
  await confirm.getByRole("button", { name: "Yes" }).click();
  await waitForAnswer(page, "Overwritten.");
  await waitIdle(page);

  await send(page, "Rate me");
  const rating = page.getByRole("group", { name: "How was it?" });
  await rating.getByRole("button", { name: "Rate 4 out of 5" }).click();
  await waitForAnswer(page, "Thanks for rating.");
  await waitIdle(page);
  await page.getByRole("group", { name: "How was it?" }).getByText("Your answer: 4 out of 5").waitFor();

  await send(page, "Connect");
  const form = page.getByRole("group", { name: "Connection details?" });
  await form.getByRole("button", { name: "Send answer" }).click();
  await form.getByRole("alert").filter({ hasText: "Please fill in: Host" }).waitFor();
  assert((await form.getByRole("textbox", { name: /Host/ }).getAttribute("aria-invalid")) === "true", "the missing field is marked");
  await screenshot(page, "form-required");
  await form.getByRole("textbox", { name: /Host/ }).fill("db.example");
  await form.getByRole("button", { name: "Send answer" }).click();
  await waitForAnswer(page, "Connecting to db.example.");
  await waitIdle(page);

  // Answered cards show their answers after a reload too.
  await page.reload();
  await page.getByRole("group", { name: "Which language?" }).getByText("Your answer: Rust").waitFor();
  await page.getByRole("group", { name: "Connection details?" }).getByText("Your answer: host: db.example").waitFor();

  // A multi-select question left unanswered is cancelled by the next message, and says so.
  await send(page, "Pizza?");
  const toppings = page.getByRole("group", { name: "Which toppings?" });
  await toppings.getByRole("checkbox", { name: "Olives" }).waitFor();
  await waitIdle(page);
  await send(page, "Forget it");
  await waitForAnswer(page, "Never mind the toppings.");
  await waitIdle(page);
  await page.getByRole("group", { name: "Which toppings?" }).getByText("was cancelled").waitFor();
  await screenshot(page, "cancelled");
});
