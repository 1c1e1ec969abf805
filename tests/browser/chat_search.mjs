// Search inside chats: the sidebar's search box finds a word from an old message (not in any
// title), shows it under the titles with its chat's title and the word marked, and opens the
// chat scrolled to that message, marked. The chat and its message are `CHAT_ID` and
// `MESSAGE_ID` (made by the Rust test, which also waited for them to be indexed).
import { scenario, signIn, screenshot, assert, until, axe } from "./lib.mjs";

const CHAT_ID = process.env.CHAT_ID;
const MESSAGE_ID = process.env.MESSAGE_ID;

await scenario(async ({ page }) => {
  await signIn(page);
  const search = page.getByRole("searchbox", { name: "Search chats" });
  await search.fill("marigolds");
  const hits = page.getByRole("list", { name: "Messages" });
  const hit = hits.getByRole("link", { name: /Garden notes/ });
  await until("the old message among the results", async () => (await hit.count()) === 1);
  const marked = await hit.locator("mark").allInnerTexts();
  assert(marked.length === 1 && marked[0] === "marigolds", `the word is marked: ${marked}`);
  assert((await hit.innerText()).includes("Plant the marigolds beside the shed"), "the snippet is the message's text");
  assert(await page.getByText("No chat matches your search.").isVisible(), "no title matches: the titles' filter says so");
  await screenshot(page, "results");
  await axe(page, "sidebar with message results");

  await hit.click();
  await until("the chat opened at the message", async () => {
    const url = new URL(page.url());
    return url.pathname === `/c/${CHAT_ID}` && url.hash === `#m-${MESSAGE_ID}`;
  });
  const message = page.locator(`article.message[data-id="${MESSAGE_ID}"]`);
  await until("the message marked and in view", async () => {
    if (!(await message.evaluate((el) => el.classList.contains("linked")))) return false;
    return message.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const view = el.closest(".scroller").getBoundingClientRect();
      return box.bottom > view.top && box.top < view.bottom;
    });
  });
  // It stays there: the conversation does not snap back to the latest message.
  await page.waitForTimeout(500);
  const stillInView = await message.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const view = el.closest(".scroller").getBoundingClientRect();
    return box.bottom > view.top && box.top < view.bottom;
  });
  assert(stillInView, "the linked message stays in view");
  const latest = page.getByRole("article", { name: "Assistant" }).last();
  assert(!(await latest.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const view = el.closest(".scroller").getBoundingClientRect();
    return box.bottom > view.top && box.top < view.bottom;
  })), "the latest answer is out of view (the chat was scrolled to the old message)");
  await screenshot(page, "opened-at-message");
  await axe(page, "conversation opened at a search result");
});
