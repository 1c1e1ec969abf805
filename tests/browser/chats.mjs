// Point 3: the chat list, newest first; new, rename, delete (with confirmation), search by
// title; each chat has its own URL (reload, back button and deep links work).
import { scenario, signIn, send, screenshot, assert, until, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  const list = page.getByRole("list", { name: "Chats" });
  await send(page, "Tell me about apples");
  await waitForAnswer(page, "First answer about apples.");
  await until("a chat URL", async () => /\/c\/[^/]+$/.test(page.url()));
  const appleUrl = page.url();
  await page.getByRole("button", { name: "New chat" }).click();
  await until("the home URL", async () => new URL(page.url()).pathname === "/");
  await send(page, "Tell me about pears");
  await waitForAnswer(page, "Second answer about pears.");
  await waitIdle(page);
  const pearUrl = page.url();
  assert(pearUrl !== appleUrl, "each chat has its own URL");
  // Newest first.
  await until("two chats, newest first", async () => {
    const titles = await list.getByRole("link").allInnerTexts();
    return titles.length === 2 && titles[0].includes("pears") && titles[1].includes("apples");
  });
  // Back goes to the previous chat, with its messages.
  await page.goBack();
  await page.goBack();
  await until("the apple chat again", async () => page.url() === appleUrl);
  await waitForAnswer(page, "First answer about apples.");
  // A deep link (and a reload) opens the chat.
  await page.goto(pearUrl);
  await waitForAnswer(page, "Second answer about pears.");
  await page.reload();
  await waitForAnswer(page, "Second answer about pears.");
  // Search by title.
  await page.getByRole("searchbox", { name: "Search chats" }).fill("apple");
  await until("only the apple chat", async () => (await list.getByRole("link").count()) === 1);
  await screenshot(page, "search");
  await page.getByRole("searchbox", { name: "Search chats" }).fill("");
  // Rename.
  await page.getByRole("button", { name: "Rename chat Tell me about pears" }).click();
  const title = page.getByRole("textbox", { name: "New title" });
  await title.fill("Pear facts");
  await title.press("Enter");
  await list.getByRole("link", { name: /Pear facts/ }).waitFor();
  await page.getByRole("heading", { name: "Pear facts" }).waitFor();
  await page.reload();
  await page.getByRole("heading", { name: "Pear facts" }).waitFor();
  // Delete asks first; Cancel keeps the chat.
  await page.getByRole("button", { name: "Delete chat Pear facts" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete this chat?" });
  await dialog.waitFor();
  await screenshot(page, "confirm-delete");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert((await list.getByRole("link").count()) === 2, "cancel keeps the chat");
  await page.getByRole("button", { name: "Delete chat Pear facts" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await until("one chat left", async () => (await list.getByRole("link").count()) === 1);
  await until("back home after deleting the open chat", async () => new URL(page.url()).pathname === "/");
  // Its URL no longer opens it.
  await page.goto(pearUrl);
  await page.getByText("This chat does not exist").waitFor();
});
