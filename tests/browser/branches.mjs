// Point 5: edit a user message, regenerate an answer, move between siblings with ‹ 2/3 ›; the
// chosen branch is the server's active branch, so it survives a reload.
import { scenario, signIn, send, screenshot, assert, until, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "First question");
  await waitForAnswer(page, "Answer to the first question.");
  await waitIdle(page);
  const user = page.getByRole("article", { name: "You" });
  const assistant = page.getByRole("article", { name: "Assistant" });

  // Edit the question: a sibling, answered anew.
  await user.getByRole("button", { name: "Edit" }).click();
  const editor = page.getByRole("textbox", { name: "Edit your message" });
  await editor.fill("Edited question");
  await page.getByRole("button", { name: "Save and send" }).click();
  await waitForAnswer(page, "Answer to the edited question.");
  await waitIdle(page);
  await user.getByText("2/2").waitFor();
  assert((await user.innerText()).includes("Edited question"), "the edit is shown");

  // Regenerate the answer: a sibling answer.
  await assistant.getByRole("button", { name: "Regenerate" }).click();
  await waitForAnswer(page, "A regenerated answer.");
  await waitIdle(page);
  await assistant.getByText("2/2").waitFor();
  await screenshot(page, "regenerated");

  // Back to the first answer of the edited question, then to the first question.
  await assistant.getByRole("button", { name: "Previous version" }).click();
  await until("the first answer again", async () => (await assistant.innerText()).includes("Answer to the edited question."));
  await assistant.getByText("1/2").waitFor();
  await user.getByRole("button", { name: "Previous version" }).click();
  await until("the first question again", async () => (await user.innerText()).includes("First question"));
  await waitForAnswer(page, "Answer to the first question.");
  await user.getByText("1/2").waitFor();

  // The choice is the server's: it survives a reload.
  await page.reload();
  await waitForAnswer(page, "Answer to the first question.");
  assert((await user.innerText()).includes("First question"), "the chosen branch after reload");
  await user.getByText("1/2").waitFor();
  // Forward again: the edited question with the answer chosen last on that branch.
  await user.getByRole("button", { name: "Next version" }).click();
  await until("the edited branch", async () => (await user.innerText()).includes("Edited question"));
  await page.reload();
  await until("the edited branch after reload", async () => (await user.innerText()).includes("Edited question"));
  await screenshot(page, "switched");
});
