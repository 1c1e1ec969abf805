// Issue 50, point 2: the agent form picks the model from the model servers' list (not free
// text) and shows each tool with what it does and what it needs (those this server lacks,
// disabled with why); a chat with the agent names it in its header, and its answer comes from
// the agent's model (the Rust test checks the request). Screenshots at 1280 and 375 px.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Agents" }).click();
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
  await page.getByRole("button", { name: "New agent" }).click();
  const form = page.getByRole("form", { name: "New agent" });
  await form.waitFor();
  await page.getByLabel("Name", { exact: true }).fill("Writer");
  const model = form.getByRole("combobox", { name: "Model" });
  const offered = await model.getByRole("option").allInnerTexts();
  assert(JSON.stringify(offered) === JSON.stringify(["Default model", "fake-model", "writer-model"]), `the servers' models: ${offered}`);
  await model.selectOption("writer-model");

  // Each tool with what it does and what it needs; email, which needs SMTP this server lacks,
  // cannot be chosen.
  await page.getByRole("radio", { name: "Only the tools chosen below" }).check();
  await form.getByText("Searches the web and reads the top results. Needs a search engine.").waitFor();
  await form.getByText(/^Sends email to the recipients this server allows\. Needs SMTP\. Not available here: /).waitFor();
  assert(await form.getByRole("checkbox", { name: "send_email", exact: true }).isDisabled(), "email is not configured here");
  assert(!(await form.getByRole("checkbox", { name: "web_search", exact: true }).isDisabled()), "web search may be chosen");
  await form.getByRole("checkbox", { name: "web_search", exact: true }).check();
  await axe(page, "agent form");
  await screenshot(page, "agent-form-1280");
  await page.setViewportSize({ width: 375, height: 812 });
  await axe(page, "agent form, 375 px");
  await screenshot(page, "agent-form-375");
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole("button", { name: "Create agent" }).click();
  await page.getByRole("status").filter({ hasText: "Saved Writer." }).waitFor();
  const agents = page.getByRole("list", { name: "Your agents" });
  await until("the agent listed with its model", async () => (await agents.innerText()).includes("writer-model · tools: web_search"));

  // Edited: the form shows the model it has.
  await page.getByRole("button", { name: "Edit Writer" }).click();
  await page.getByRole("form", { name: "Edit Writer" }).waitFor();
  assert((await page.getByRole("combobox", { name: "Model" }).inputValue()) === "writer-model", "its model is kept");
  await page.getByRole("button", { name: "Cancel" }).click();

  // A chat with it: the header names it, and links to the agents page.
  await page.getByRole("button", { name: "Start a chat with Writer" }).click();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  const badge = page.getByRole("link", { name: "Agent: Writer" });
  await badge.waitFor();
  await send(page, "Write a line.");
  await waitForAnswer(page, "Written by the writer.");
  await waitIdle(page);
  assert(await badge.isVisible(), "the chat's header names its agent");
  await axe(page, "chat with the agent");
  await screenshot(page, "agent-chat-1280");
  await page.setViewportSize({ width: 375, height: 812 });
  assert(await badge.isVisible(), "the header names the agent on a phone too (its icon)");
  await axe(page, "chat with the agent, 375 px");
  await screenshot(page, "agent-chat-375");
  await page.setViewportSize({ width: 1280, height: 800 });
  await badge.click();
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
});
