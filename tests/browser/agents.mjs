// Point 7: a chat's agent is picked in its settings; the Tools switch shows the tools that
// agent allows, and the research tools it does not allow cannot be chosen. The Rust side made
// a "Calculator" agent (enabled_tools: calculator) and checks what the model was offered. The
// tools every chat has (artifacts, memory, ask_user, file_search) are listed beside its own.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

/// What the Calculator agent allows: its one research tool and every chat's own.
const CALCULATOR_AGENT = ["calculator", "create_artifact", "update_artifact", "save_memory", "recall_memory", "ask_user", "file_search"];

/// The tool names under the Tools switch.
const allowed = (page) =>
  page.getByRole("list", { name: "Tools this agent allows:" }).getByRole("listitem").allInnerTexts();

const shown = (agent) => agent.evaluate((select) => select.selectedOptions[0]?.textContent ?? "");

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Hello there");
  await waitForAnswer(page, "Hello from the default agent.");
  await waitIdle(page);

  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const agent = page.getByRole("combobox", { name: "Agent" });
  await until("the chat's agent, the default one", async () => (await shown(agent)).endsWith("(default)"));
  await until("the default agent's tools", async () => {
    const names = await allowed(page);
    return names.includes("calculator") && names.includes("web_search");
  });
  const tools = page.getByRole("switch", { name: "Tools" });
  assert(!(await tools.isChecked()), "the default agent's research tools are opt-in");
  await axe(page, "settings, default agent");
  await screenshot(page, "default-agent");

  await agent.selectOption({ label: "Calculator" });
  await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
  await until("only the calculator and the chat's tools", async () => JSON.stringify(await allowed(page)) === JSON.stringify(CALCULATOR_AGENT));
  assert(await tools.isChecked(), "an agent that names its tools has them on");
  assert(await page.getByRole("checkbox", { name: "Web search" }).isDisabled(), "web search is not allowed");
  assert(!(await page.getByRole("checkbox", { name: "Calculator" }).isDisabled()), "the calculator is allowed");
  await page.getByText("(this agent does not allow it)").first().waitFor();
  await axe(page, "settings, Calculator agent");
  await screenshot(page, "calculator-agent");

  // The agent is the chat's, kept by the server: still shown after a reload.
  await page.reload();
  await waitForAnswer(page, "Hello from the default agent.");
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  await until("the Calculator agent after a reload", async () => (await shown(agent)) === "Calculator");
  await until("only the calculator and the chat's tools after a reload", async () => JSON.stringify(await allowed(page)) === JSON.stringify(CALCULATOR_AGENT));

  await send(page, "What is 6 times 7?");
  await waitForAnswer(page, "Using the calculator agent.");
  await waitIdle(page);
  await screenshot(page, "answered");
});
