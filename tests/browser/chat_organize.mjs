// Issue 50 point 4: chats organised in the sidebar. A chat is pinned from its menu (it moves to
// the top and stays there after a reload), a folder is made from a chat's menu and another
// chat is dragged into it, a chat is archived with the keyboard (gone from the list) and
// restored from the Archived view. axe finds nothing serious with the menu, the name dialog
// and the archived view open; screenshots at 1280 and 375 px in both themes.
import { scenario, signIn, screenshot, assert, until, axe } from "./lib.mjs";

const nav = (page) => page.getByRole("navigation", { name: "Chats" });
const titlesIn = async (list) => (await list.getByRole("link").allInnerTexts()).map((t) => t.split("\n")[0]);

await scenario(async ({ page }) => {
  await signIn(page);
  const chats = nav(page).getByRole("list", { name: "Chats", exact: true });
  await until("the four chats", async () => (await titlesIn(chats)).length === 4);
  assert((await titlesIn(chats))[3] === "Alpha notes", `oldest last: ${await titlesIn(chats)}`);

  // Pin from the chat's menu: it moves to the Pinned section, on top.
  await page.getByRole("button", { name: "Chat actions for Alpha notes" }).click();
  const menu = page.getByRole("menu", { name: "Chat actions for Alpha notes" });
  await menu.waitFor();
  await axe(page, "a chat's menu open");
  await screenshot(page, "menu-1280-light");
  await menu.getByRole("menuitem", { name: "Pin", exact: true }).click();
  const pinned = nav(page).getByRole("list", { name: "Pinned", exact: true });
  await until("Alpha pinned", async () => (await titlesIn(pinned)).join() === "Alpha notes");
  const first = async () => (await nav(page).getByRole("link").filter({ hasText: /notes|plan|ideas|list/ }).first().innerText()).split("\n")[0];
  assert((await first()) === "Alpha notes", "the pinned chat is the first chat in the sidebar");
  assert(!(await titlesIn(chats)).includes("Alpha notes"), "and is no longer among the others");
  await page.reload();
  await until("still pinned after a reload", async () => (await titlesIn(pinned)).join() === "Alpha notes");

  // A new folder from a chat's menu; the chat goes into it.
  await page.getByRole("button", { name: "Chat actions for Beta plan" }).click();
  await page.getByRole("menuitem", { name: "New folder…" }).click();
  const dialog = page.getByRole("dialog", { name: "New folder" });
  await dialog.waitFor();
  await axe(page, "the new folder dialog");
  await dialog.getByRole("textbox", { name: "Folder name" }).fill("Work");
  await dialog.getByRole("button", { name: "Create" }).click();
  const work = nav(page).getByRole("list", { name: /^Work/ });
  await until("Beta in Work", async () => (await titlesIn(work)).join() === "Beta plan");

  // Dragging a chat onto the folder moves it in.
  await nav(page).getByRole("link", { name: /Gamma ideas/ }).dragTo(page.getByRole("button", { name: /^Work/ }));
  await until("Gamma in Work", async () => (await titlesIn(work)).sort().join() === "Beta plan,Gamma ideas");
  assert((await titlesIn(chats)).join() === "Delta list", `only Delta is unfiled: ${await titlesIn(chats)}`);

  // The folder folds away and opens again.
  const toggle = page.getByRole("button", { name: /^Work/ });
  await toggle.click();
  await until("Work folded", async () => (await toggle.getAttribute("aria-expanded")) === "false");
  assert(!(await work.isVisible()), "a folded folder hides its chats");
  await toggle.press("Enter");
  await until("Work open", async () => (await toggle.getAttribute("aria-expanded")) === "true");
  await screenshot(page, "organised-1280-light");

  // Archive with the keyboard alone: the menu opens on ArrowDown, arrows move, Enter picks.
  const deltaActions = page.getByRole("button", { name: "Chat actions for Delta list" });
  await deltaActions.focus();
  await page.keyboard.press("ArrowDown");
  await until("the menu's first item focused", async () =>
    page.evaluate(() => document.activeElement?.getAttribute("role") === "menuitem" && document.activeElement.textContent));
  let picked = "";
  for (let i = 0; i < 8 && picked !== "Archive"; i++) {
    await page.keyboard.press("ArrowDown");
    picked = await page.evaluate(() => document.activeElement?.textContent);
  }
  assert(picked === "Archive", `the arrows reach Archive (${picked})`);
  await page.keyboard.press("Enter");
  await until("Delta gone from the list", async () => !(await nav(page).getByRole("link", { name: /Delta list/ }).count()));

  // Escape closes a menu and gives focus back to its button.
  const alphaActions = page.getByRole("button", { name: "Chat actions for Alpha notes" });
  await alphaActions.click();
  await page.getByRole("menu").waitFor();
  await page.keyboard.press("Escape");
  await until("the menu closed", async () => (await page.getByRole("menu").count()) === 0);
  assert(await alphaActions.evaluate((el) => el === document.activeElement), "focus is back on the menu's button");

  // The Archived view lists it; Restore brings it back.
  await page.getByRole("button", { name: "Archived" }).click();
  const archived = nav(page).getByRole("list", { name: "Archived", exact: true });
  await until("Delta archived", async () => (await titlesIn(archived)).join() === "Delta list");
  await axe(page, "the archived view");
  await screenshot(page, "archived-1280-light");
  await page.emulateMedia({ colorScheme: "dark" });
  await axe(page, "the archived view, dark");
  await screenshot(page, "archived-1280-dark");
  await page.getByRole("button", { name: "Restore chat Delta list" }).click();
  await until("Delta back in the list", async () => (await titlesIn(chats)).join() === "Delta list");
  await until("nothing archived", async () => (await archived.getByRole("link").count()) === 0);
  await page.getByRole("button", { name: "Chat actions for Gamma ideas" }).click();
  await axe(page, "a chat's menu, dark");
  await screenshot(page, "menu-1280-dark");
  await page.keyboard.press("Escape");

  // On a phone the list is a drawer with the same sections.
  await page.setViewportSize({ width: 375, height: 812 });
  await page.getByRole("button", { name: "Show chats" }).click();
  await until("the drawer shows the pinned chat", async () => pinned.isVisible());
  await axe(page, "the organised list at 375 px, dark");
  await screenshot(page, "drawer-375-dark");
  await page.getByRole("button", { name: "Chat actions for Beta plan" }).click();
  const phoneMenu = page.getByRole("menu");
  await phoneMenu.waitFor();
  const box = await phoneMenu.boundingBox();
  assert(box.x >= 0 && box.x + box.width <= 375, `the menu fits the screen: ${JSON.stringify(box)}`);
  await screenshot(page, "menu-375-dark");
  await page.keyboard.press("Escape");
  await page.emulateMedia({ colorScheme: "light" });
  await axe(page, "the organised list at 375 px, light");
  await screenshot(page, "drawer-375-light");
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert(width <= 375, `nothing scrolls sideways at 375 px (${width})`);
});
