// Point 3: the memory panel: the chat's memories with category and date; add, edit (re-listed
// with the new text, also after a reload), delete with confirmation; and a memory the model
// saves during a run (`save_memory`) appears while the run is still going, without a reload.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Hi");
  await waitForAnswer(page, "Hello there.");
  await waitIdle(page);

  await page.getByRole("button", { name: "Memory", exact: true }).click();
  const panel = page.getByRole("region", { name: "Memory" });
  await panel.getByText(/Nothing remembered yet/).waitFor();
  await axe(page, "memory panel (empty)");
  const list = panel.getByRole("list", { name: "Saved memories" });
  const item = (text) => list.getByRole("listitem").filter({ hasText: text });

  // Add: one with a category, one whose category the server infers.
  await panel.getByRole("textbox", { name: "New memory" }).fill("I prefer tea to coffee");
  await panel.getByRole("combobox", { name: "Category" }).selectOption({ label: "Preference" });
  await panel.getByRole("button", { name: "Add memory" }).click();
  await item("I prefer tea to coffee").waitFor();
  await panel.getByRole("textbox", { name: "New memory" }).fill("The project is called Colloquy");
  await panel.getByRole("button", { name: "Add memory" }).click();
  await item("The project is called Colloquy").waitFor();
  const tea = await item("I prefer tea to coffee").innerText();
  assert(tea.includes("Preference") && /Saved .*\d{4}/.test(tea), `category and date are shown: ${tea}`);
  assert((await item("The project is called Colloquy").innerText()).includes("Fact"), "the category was inferred");
  await screenshot(page, "added");

  // Edit: re-listed with the new text, and still so after a reload.
  await panel.getByRole("button", { name: "Edit memory: I prefer tea to coffee" }).click();
  const box = panel.getByRole("textbox", { name: "Memory text" });
  await box.fill("I prefer green tea to coffee");
  await axe(page, "memory panel (editing)");
  await screenshot(page, "editing");
  await panel.getByRole("button", { name: "Save", exact: true }).click();
  await item("I prefer green tea to coffee").waitFor();
  assert((await item("I prefer tea to coffee").count()) === 0, "the old text is gone");
  await page.reload();
  await page.getByRole("button", { name: "Memory", exact: true }).click();
  await item("I prefer green tea to coffee").waitFor();
  assert((await item("I prefer tea to coffee").count()) === 0, "the edit is the server's");

  // Delete asks first.
  await panel.getByRole("button", { name: "Delete memory: The project is called Colloquy" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete this memory?" });
  await confirm.getByRole("button", { name: "Delete" }).click();
  await until("the deleted memory gone", async () => (await item("The project is called Colloquy").count()) === 0);

  // The model saves a memory mid-run: it is listed while the answer is still coming.
  await send(page, "Remember that I write Rust");
  await item("The user writes code in Rust.").waitFor();
  assert(await page.getByRole("button", { name: "Stop" }).isVisible(), "the run is still going when the memory appears");
  assert((await item("The user writes code in Rust.").innerText()).includes("Fact"), "with its category");
  await screenshot(page, "saved-by-the-model");
  await waitForAnswer(page, "Saved.");
  await waitIdle(page);
  assert((await list.getByRole("listitem").count()) === 2, "two memories remain");
  await axe(page, "memory panel (listed)");
  await screenshot(page, "listed");
});
