// Issue 35 point 5: the agents page. Create an agent with two tools chosen from the server's
// catalog (each shown with its description) and the knowledge base the Rust side made, edit its
// instructions, start a chat with it and see only those two tools offered; then delete it. axe
// on the list and the form at desktop width and at 375 px.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

const allowed = (page) =>
  page.getByRole("list", { name: "Tools this agent allows:" }).getByRole("listitem").allInnerTexts();

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Agents" }).click();
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
  await page.getByRole("list", { name: "Your agents" }).getByText("(default)").waitFor();
  await axe(page, "agents page, desktop");

  await page.getByRole("button", { name: "New agent" }).click();
  await page.getByRole("form", { name: "New agent" }).waitFor();
  await page.getByLabel("Name", { exact: true }).fill("Researcher");
  await page.getByLabel("Instructions").fill("Cite your sources.");
  assert(await page.getByRole("switch", { name: "Tools" }).isChecked(), "a new agent's tools are on");
  const search = page.getByRole("checkbox", { name: "web_search", exact: true });
  assert(await search.isDisabled(), "tools are chosen only with “Only the tools chosen below”");
  await page.getByRole("radio", { name: "Only the tools chosen below" }).check();
  const toolGroup = await page.getByRole("group").filter({ has: search }).innerText();
  const description = toolGroup.match(/web_search\s+(\S[^\n]{10,})/)?.[1];
  assert(description && !description.startsWith("fetch_url"), `web_search is described: ${toolGroup}`);
  await search.check();
  await page.getByRole("checkbox", { name: "calculator", exact: true }).check();
  await page.getByRole("group", { name: "Knowledge bases it searches" }).getByRole("checkbox", { name: "Gold notes" }).check();
  await axe(page, "agents page, the form");
  await screenshot(page, "new-agent");
  await page.getByRole("button", { name: "Create agent" }).click();
  await page.getByRole("status").filter({ hasText: "Saved Researcher." }).waitFor();
  const agents = page.getByRole("list", { name: "Your agents" });
  await until("the agent listed with its tools", async () => /tools: (calculator, web_search|web_search, calculator)/.test(await agents.innerText()));
  const saved = await page.evaluate(async () => (await (await fetch("/api/agents")).json()).agents.find((a) => a.name === "Researcher"));
  assert(saved.knowledge_base_ids.length === 1, `the chosen knowledge base is saved: ${JSON.stringify(saved)}`);

  // Edited: the form shows what was saved.
  await page.getByRole("button", { name: "Edit Researcher" }).click();
  await page.getByRole("form", { name: "Edit Researcher" }).waitFor();
  assert(await page.getByRole("checkbox", { name: "calculator", exact: true }).isChecked(), "its tools are kept");
  assert(!(await page.getByRole("checkbox", { name: "fetch_url", exact: true }).isChecked()), "only those");
  assert(await page.getByRole("checkbox", { name: "Gold notes" }).isChecked(), "its knowledge base is kept");
  await page.getByLabel("Instructions").fill("Cite your sources, briefly.");
  await page.setViewportSize({ width: 375, height: 800 });
  await axe(page, "agents page, 375 px");
  await screenshot(page, "edit-agent-narrow");
  await page.getByRole("button", { name: "Save agent" }).click();
  await page.getByRole("status").filter({ hasText: "Saved Researcher." }).waitFor();
  await until("the agents list", async () => (await agents.innerText()).includes("Researcher"));
  await axe(page, "agents list, 375 px");
  await screenshot(page, "agents-list-narrow");
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole("button", { name: "Start a chat with Researcher" }).click();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const agent = page.getByRole("combobox", { name: "Agent" });
  await agent.getByRole("option", { name: "Researcher", selected: true }).waitFor({ state: "attached" });
  // Its two tools, and every chat's own beside them.
  const expected = ["ask_user", "calculator", "create_artifact", "file_search", "recall_memory", "save_memory", "update_artifact", "web_search"];
  await until("the agent's two tools and the chat's", async () => JSON.stringify((await allowed(page)).sort()) === JSON.stringify(expected));
  await send(page, "What should I read?");
  await waitForAnswer(page, "Answered by the researcher.");
  await waitIdle(page);
  await screenshot(page, "chat-with-agent");

  await page.getByRole("link", { name: "Agents" }).click();
  await page.getByRole("button", { name: "Delete Researcher" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await page.getByRole("status").filter({ hasText: "Deleted Researcher." }).waitFor();
  await until("the agent gone", async () => !(await agents.innerText()).includes("Researcher"));
});
