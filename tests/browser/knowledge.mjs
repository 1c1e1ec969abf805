// Issue 32, knowledge bases: one is made on its page (reached from the sidebar), a file is
// uploaded into it with the documents panel's progress and status marks, it is given to the
// chat's agent in the chat's settings, and that agent's chat then calls search_knowledge; then
// it is renamed and deleted. The Rust side scripts the model's call and checks what the model
// was given.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Hello");
  await waitForAnswer(page, "Ask me about the handbook.");
  await waitIdle(page);

  await page.getByRole("link", { name: "Knowledge bases" }).click();
  await page.getByRole("heading", { name: "Knowledge bases", level: 1 }).waitFor();
  await page.getByText("No knowledge bases yet.").waitFor();
  assert(new URL(page.url()).pathname === "/knowledge", `the page has its URL: ${page.url()}`);
  await axe(page, "knowledge bases, none yet");
  await screenshot(page, "empty");

  await page.getByRole("textbox", { name: "Name" }).fill("Handbook");
  await page.getByRole("button", { name: "Create knowledge base" }).click();
  await page.getByRole("heading", { name: "Handbook", level: 2 }).waitFor();
  assert(/\/knowledge\/kb_/.test(page.url()), `the knowledge base has its own URL: ${page.url()}`);
  const bases = page.getByRole("list", { name: "Your knowledge bases" });
  await bases.getByRole("link", { name: /Handbook/ }).waitFor();

  // The documents panel over the knowledge base: pick a file, watch it become searchable.
  const panel = page.getByRole("region", { name: "Documents" });
  await panel.getByText(/No documents yet/).waitFor();
  const picked = page.waitForEvent("filechooser");
  await panel.getByRole("button", { name: "Choose files…" }).click();
  await (await picked).setFiles({
    name: "holidays.md",
    mimeType: "text/markdown",
    buffer: Buffer.from("# Holiday policy\n\nEvery employee has 25 days of paid holiday a year.\n"),
  });
  const documents = panel.getByRole("list", { name: "Documents in this knowledge base" });
  await documents.getByRole("listitem").filter({ hasText: "holidays.md" }).getByRole("img", { name: "Searchable" }).waitFor();
  await bases.getByRole("link", { name: /Handbook\s*1 document/ }).waitFor();
  await axe(page, "a knowledge base with a document");
  await screenshot(page, "uploaded");
  // At 375 px the list and the opened knowledge base stack, the chat list a drawer.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.getByRole("button", { name: "Show chats" }).waitFor();
  await axe(page, "a knowledge base at 375 px");
  await screenshot(page, "narrow");
  await page.setViewportSize({ width: 1280, height: 800 });

  // Reloaded, the page opens the same knowledge base.
  await page.reload();
  await page.getByRole("heading", { name: "Handbook", level: 2 }).waitFor();
  await documents.getByRole("listitem").filter({ hasText: "holidays.md" }).waitFor();

  // Back in the chat: its settings give the chat's agent the knowledge base.
  await page.getByRole("list", { name: "Chats" }).getByRole("link").first().click();
  await waitForAnswer(page, "Ask me about the handbook.");
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  const choices = page.getByRole("group", { name: /Knowledge bases this agent searches/ });
  await choices.getByRole("checkbox", { name: "Handbook" }).check();
  await choices.getByRole("status").filter({ hasText: "Saved." }).waitFor();
  await until("search_knowledge among the agent's tools", async () =>
    (await page.getByRole("list", { name: "Tools this agent allows:" }).getByRole("listitem").allInnerTexts()).includes("search_knowledge"));
  await axe(page, "chat settings with a knowledge base");
  await screenshot(page, "attached");
  await page.getByRole("button", { name: "Settings", exact: true }).click();

  await send(page, "How many days of holiday do we get?");
  await waitForAnswer(page, "You get 25 days of paid holiday.");
  await waitIdle(page);
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  await answer.getByText("1 tool call").click();
  await answer.getByText("search_knowledge", { exact: true }).waitFor();
  await axe(page, "an answer that searched the knowledge base");
  await screenshot(page, "answered");

  // Renamed, then deleted after a confirmation, from its page.
  await page.getByRole("link", { name: "Knowledge bases" }).click();
  await bases.getByRole("link", { name: /Handbook/ }).click();
  await page.getByRole("button", { name: "Rename Handbook" }).click();
  await page.getByRole("textbox", { name: "New name" }).fill("Staff handbook");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByRole("heading", { name: "Staff handbook", level: 2 }).waitFor();
  await bases.getByRole("link", { name: /Staff handbook/ }).waitFor();
  await page.getByRole("button", { name: "Delete Staff handbook" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete Staff handbook?" });
  await dialog.getByRole("button", { name: "Delete" }).click();
  await page.getByText("No knowledge bases yet.").waitFor();
  assert(new URL(page.url()).pathname === "/knowledge", `back to the list: ${page.url()}`);
  await screenshot(page, "deleted");
});
