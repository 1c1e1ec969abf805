// Issue 35 point 6: a chat (two answers to one question, an artifact) exported from its
// settings as Markdown (the branch shown) and as JSON; the JSON imported on the account page
// opens as a new chat showing the same messages. The Rust side compares the two trees. axe
// checks the settings panel with its export links.
import { readFileSync } from "node:fs";
import { scenario, signIn, screenshot, assert, until, messages, axe } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: /Trip plans/ }).click();
  await until("the chat's messages", async () => (await messages(page)).some((t) => t.includes("Porto, for the wine.")));
  const shown = await messages(page);

  await page.getByRole("button", { name: "Settings", exact: true }).click();
  await page.getByRole("link", { name: "Export as Markdown" }).waitFor();
  await axe(page, "the chat settings panel with its export links");
  const [markdown] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Export as Markdown" }).click(),
  ]);
  assert(markdown.suggestedFilename().endsWith(".md"), markdown.suggestedFilename());
  const text = readFileSync(await markdown.path(), "utf8");
  assert(text.startsWith("# Trip plans"), text);
  assert(text.includes("Porto, for the wine.") && !text.includes("Lisbon"), `the visible branch only: ${text}`);

  const [json] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: "Export as JSON" }).click(),
  ]);
  const path = await json.path();
  const exported = JSON.parse(readFileSync(path, "utf8"));
  assert(exported.messages.some((m) => m.content === "Lisbon, and here is a packing list."), "every branch is in the JSON");
  assert(exported.artifacts.length === 1, "the artifact is in the JSON");

  await page.getByRole("link", { name: "Account settings" }).click();
  await page.getByRole("heading", { name: "Export and import" }).waitFor();
  await page.getByLabel("Import a chat").setInputFiles(path);
  await until("the imported chat opened", async () => /\/c\//.test(new URL(page.url()).pathname));
  await until("the same messages", async () => JSON.stringify(await messages(page)) === JSON.stringify(shown));
  await page.getByRole("navigation", { name: "Chats" }).getByRole("link", { name: /Trip plans/ }).nth(1).waitFor();
  await screenshot(page, "imported");
});
