// Issue 35, the model picker: the chat header names the chat's model; its list shows every
// model server's models (searchable when there are many), a down server's marked unavailable; choosing another makes the next
// answer come from that server, the answer's footer names it, and the chat remembers it after
// a reload. The default model set on /settings is what a new chat's picker shows, and its
// answer comes from that model's server. The Rust side checks which server got which request.
// axe checks the open picker at desktop and 375 px widths.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("button", { name: "Model: alpha" }).waitFor();
  await send(page, "Hello");
  await waitForAnswer(page, "From A.");
  await waitIdle(page);
  await page.getByRole("article", { name: "Assistant" }).last().getByText("Answered by alpha").waitFor();

  await page.getByRole("button", { name: "Model: alpha" }).click();
  const list = page.getByRole("listbox", { name: "Models" });
  await list.getByRole("option", { name: "beta" }).waitFor();
  const gamma = list.getByRole("option", { name: "gamma (server unavailable)" });
  await gamma.waitFor();
  assert(await gamma.getAttribute("aria-disabled") === "true", "a down server's model cannot be chosen");
  assert(await list.getByRole("option", { name: "alpha" }).getAttribute("aria-selected") === "true", "the chat's model is selected");
  await axe(page, "the open model picker");
  await screenshot(page, "picker");

  // Many models: a search narrows the list.
  await page.getByRole("searchbox", { name: "Search models" }).fill("bet");
  await until("the search to leave beta alone", async () =>
    (await list.getByRole("option").allInnerTexts()).join("|") === "beta");
  await list.getByRole("option", { name: "beta" }).click();
  await page.getByRole("button", { name: "Model: beta" }).waitFor();
  await send(page, "And you?");
  await waitForAnswer(page, "From B.");
  await waitIdle(page);
  await page.getByRole("article", { name: "Assistant" }).last().getByText("Answered by beta").waitFor();
  await screenshot(page, "answered");

  // Remembered by the chat.
  await page.reload();
  await page.getByRole("button", { name: "Model: beta" }).waitFor();
  await page.getByRole("article", { name: "Assistant" }).first().getByText("Answered by alpha").waitFor();

  await page.setViewportSize({ width: 375, height: 740 });
  await page.getByRole("button", { name: "Model: beta" }).click();
  await list.getByRole("option", { name: "alpha" }).waitFor();
  await axe(page, "the open model picker at 375 px");
  await screenshot(page, "narrow");
  await page.keyboard.press("Escape");
  assert(await list.isHidden(), "Escape closes the picker");

  // The default for new chats, set on the account page.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/settings");
  const choice = page.getByRole("combobox", { name: "Default model for new chats" });
  await choice.getByRole("option", { name: "beta", exact: true }).waitFor({ state: "attached" });
  await choice.selectOption({ label: "beta" });
  // One Save for the profile form, the default model included.
  await page.getByRole("button", { name: "Save profile" }).click();
  await page.getByRole("status").filter({ hasText: "New chats start with beta." }).waitFor();
  await page.reload();
  await until("the saved default to be chosen", async () =>
    (await page.getByRole("combobox", { name: "Default model for new chats" }).inputValue()) === "beta");
  await page.getByRole("button", { name: "New chat" }).click();
  await page.getByRole("button", { name: "Model: beta" }).waitFor();
  await send(page, "A new chat");
  await waitForAnswer(page, "From B, by default.");
  await waitIdle(page);
  await page.getByRole("article", { name: "Assistant" }).last().getByText("Answered by beta").waitFor();
});
