// Issue 50 point 1, a layout that holds: every page, at 320, 375, 768, 1280 and 1920 px wide
// (`LAYOUT_WIDTHS`), in the theme `LAYOUT_THEME` (the Rust side runs the walk for each theme).
// On each it fails on
//   - the page scrolling sideways (the document wider than the window),
//   - an interactive element covered by something else (the centre of each visible button,
//     link and field is hit-tested: it must land on that element, or inside it),
//   - text cut off inside a button (the button, or a label in it, wider inside than out),
//   - a chat header more than one row high, or its title squeezed to nothing,
//   - serious or critical axe findings.
// Problems are collected over the whole walk and reported together. Screenshots of every page
// at 375 and 1280 px land in target/browser-screenshots/.
import { scenario, signIn, screenshot, assert, axe, send, waitForAnswer, waitIdle, BASE } from "./lib.mjs";

const THEME = process.env.LAYOUT_THEME ?? "light";
/// The widths this run walks (the Rust side splits the five, 320 to 1920 px, over two runs per
/// theme, each within a scenario's time limit).
const WIDTHS = (process.env.LAYOUT_WIDTHS ?? "320,375,768,1280,1920").split(",").map(Number);
const SHOT_WIDTHS = new Set([375, 1280]);
/// The answer the Rust side scripted (its last words), so a conversation page is ready.
const ANSWER_END = "That is the whole plan.";

/// A secondary action of the chat header, wherever the width put it: in the row, or in the
/// "More actions" menu on narrow screens.
async function headerAction(page, name) {
  const more = page.getByRole("button", { name: "More actions" });
  if (await more.isVisible()) await more.click();
  await page.getByRole("button", { name, exact: false }).filter({ has: page.locator(".action-label") }).first().click();
}

/// Every page of the walk, in order. `path` is where it is (a function of the walk's chat
/// when it needs one), `ready` waits until it is drawn, `open` (optional) then opens a panel;
/// `signedOut` pages are seen in a browser without a session. Add a page here and every width
/// and theme check it.
const PAGES = [
  { name: "sign-in", signedOut: true, path: "/", ready: (page) => page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor() },
  { name: "home", path: "/", ready: (page) => page.getByRole("heading", { name: "New chat", level: 1 }).waitFor() },
  { name: "conversation", path: ({ chat }) => chat, ready: (page) => waitForAnswer(page, ANSWER_END) },
  {
    // On narrow screens: the header's "More actions" menu, open (wide ones show its buttons).
    name: "header-menu", path: ({ chat }) => chat, ready: (page) => waitForAnswer(page, ANSWER_END),
    open: async (page) => {
      const more = page.getByRole("button", { name: "More actions" });
      if (await more.isVisible()) await more.click();
      await page.getByRole("button", { name: "Settings", exact: true }).waitFor();
    },
  },
  {
    name: "chat-settings", path: ({ chat }) => chat, ready: (page) => waitForAnswer(page, ANSWER_END),
    open: async (page) => {
      await headerAction(page, "Settings");
      await page.locator("#chat-settings").waitFor();
    },
  },
  {
    name: "artifacts", path: ({ chat }) => chat, ready: (page) => waitForAnswer(page, ANSWER_END),
    open: async (page) => {
      await headerAction(page, "Artifacts");
      await page.getByRole("dialog", { name: "Artifacts" }).waitFor();
    },
  },
  {
    name: "documents", path: ({ chat }) => chat, ready: (page) => waitForAnswer(page, ANSWER_END),
    open: async (page) => {
      await headerAction(page, "Documents");
      await page.getByRole("button", { name: "Choose files…" }).waitFor();
      await page.getByText(/^Up to .* per file\.$/).waitFor();
    },
  },
  {
    name: "memory", path: ({ chat }) => chat, ready: (page) => waitForAnswer(page, ANSWER_END),
    open: async (page) => {
      await headerAction(page, "Memory");
      await page.getByRole("button", { name: "Add memory" }).waitFor();
    },
  },
  {
    // The read-only page a shared link opens, seen signed out.
    name: "shared", signedOut: true, path: ({ shared }) => shared,
    ready: (page) => page.getByText(ANSWER_END).waitFor(),
  },
  { name: "knowledge", path: "/knowledge", ready: (page) => page.getByRole("heading", { name: "Knowledge bases", level: 1 }).waitFor() },
  { name: "settings", path: "/settings", ready: (page) => page.getByRole("heading", { name: "Sessions" }).waitFor() },
  { name: "agents", path: "/agents", ready: (page) => page.getByRole("heading", { name: "Agents", level: 1 }).waitFor() },
  { name: "automations", path: "/automations", ready: (page) => page.getByRole("heading", { name: "Automations", level: 1 }).waitFor() },
  {
    name: "admin", path: "/admin",
    ready: async (page) => {
      await page.getByRole("button", { name: "Delete margaret.hamilton-apollo" }).waitFor();
      await page.getByRole("heading", { name: "Model servers" }).waitFor();
    },
  },
];

/// What is wrong with the layout the page shows now, in words (runs in the page).
function layoutProblems() {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) problems.push(`the page scrolls sideways (${root.scrollWidth} px in ${root.clientWidth})`);
  const describe = (el) => {
    const words = el.getAttribute("aria-label") || el.textContent.trim().replace(/\s+/g, " ").slice(0, 40)
      || el.getAttribute("placeholder") || el.id || el.className;
    return `${el.tagName.toLowerCase()} "${words}"`;
  };
  /// The centre of `el` when it is on screen to be seen: null when it is hidden, too small to
  /// be a target (visually hidden text), or (partly) scrolled out of a scrolling box.
  const centre = (el) => {
    // A link broken over two lines is hit where its first line is.
    const box = el.getClientRects()[0] ?? el.getBoundingClientRect();
    if (box.width < 2 || box.height < 2 || el.closest("[inert], [aria-hidden='true']")) return null;
    const style = getComputedStyle(el);
    if (style.visibility !== "visible" || Number(style.opacity) === 0) return null;
    const x = box.left + box.width / 2;
    const y = box.top + box.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return null;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      const s = getComputedStyle(up);
      if (s.overflowX === "visible" && s.overflowY === "visible") continue;
      // Partly scrolled out of its box (at the edge of the messages, the chat list): a
      // reader scrolls to it; nothing covers it.
      const clip = up.getBoundingClientRect();
      if (box.left < clip.left - 1 || box.right > clip.right + 1 || box.top < clip.top - 1 || box.bottom > clip.bottom + 1) return null;
    }
    return { x, y };
  };
  const targets = document.querySelectorAll("button, a[href], input:not([type='hidden']), select, textarea, summary, [role='button']");
  for (const el of targets) {
    const at = centre(el);
    if (!at) continue;
    const hit = document.elementFromPoint(at.x, at.y);
    if (!hit || el === hit || el.contains(hit)) continue;
    if (el.labels && [...el.labels].some((label) => label.contains(hit))) continue;
    // On narrow screens a side panel lies over the thread on purpose (never the header or
    // the composer).
    if (el.closest(".conversation-thread") && hit.closest(".artifacts-panel, .side-panel")) continue;
    // An open menu lies over the page below it on purpose.
    if (!el.closest("header") && hit.closest(".actions-open .header-actions")) continue;
    problems.push(`${describe(el)} is covered by ${describe(hit)} at (${Math.round(at.x)}, ${Math.round(at.y)})`);
  }
  for (const button of document.querySelectorAll("button")) {
    if (!centre(button)) continue;
    for (const part of [button, ...button.querySelectorAll("span")]) {
      if (part.clientWidth >= 2 && part.scrollWidth > part.clientWidth + 1) {
        problems.push(`the text of ${describe(button)} is cut off (${part.scrollWidth} px in ${part.clientWidth})`);
        break;
      }
    }
  }
  const ruler = document.createElement("canvas").getContext("2d");
  for (const field of document.querySelectorAll("input[placeholder], textarea[placeholder]")) {
    if (field.value || !field.placeholder || !centre(field)) continue;
    const style = getComputedStyle(field);
    ruler.font = style.font;
    const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const height = field.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    const lines = field.tagName === "TEXTAREA" ? Math.max(1, Math.floor(height / parseFloat(style.lineHeight))) : 1;
    const wide = ruler.measureText(field.placeholder).width;
    if (wide > room * lines) problems.push(`the placeholder of ${describe(field)} is cut off (${Math.round(wide)} px in ${lines} × ${Math.round(room)})`);
  }
  for (const header of document.querySelectorAll(".chat-header")) {
    const height = header.getBoundingClientRect().height;
    if (height > 72) problems.push(`the header takes more than one row (${Math.round(height)} px high)`);
    const title = header.querySelector("h1");
    if (title && title.getBoundingClientRect().width < 48) {
      problems.push(`the title "${title.textContent}" is squeezed to ${Math.round(title.getBoundingClientRect().width)} px`);
    }
  }
  return problems;
}

await scenario(async ({ page, browser }) => {
  await page.emulateMedia({ colorScheme: THEME });
  await signIn(page);
  await send(page, "Plan my week, please.");
  await waitForAnswer(page, ANSWER_END);
  await waitIdle(page);
  const setup = { chat: new URL(page.url()).pathname };
  assert(setup.chat.startsWith("/c/"), `the chat has its page: ${setup.chat}`);
  // A read-only link to it, made as the owner would (the Share dialog has its own test).
  const made = await page.evaluate(async (chat) => {
    const response = await fetch(`/chat/api/chats/${chat}/shares`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    return { status: response.status, body: await response.json() };
  }, setup.chat.slice("/c/".length));
  assert(made.status === 201 && made.body.token, `a shared link is made: ${JSON.stringify(made)}`);
  setup.shared = `/s/${made.body.token}`;

  const outside = await browser.newContext({ baseURL: BASE, colorScheme: THEME });
  const signedOut = await outside.newPage();
  const found = [];
  for (const width of WIDTHS) {
    for (const where of PAGES) {
      const tab = where.signedOut ? signedOut : page;
      await tab.setViewportSize({ width, height: width < 768 ? 812 : 800 });
      const path = typeof where.path === "function" ? where.path(setup) : where.path;
      await tab.goto(path);
      await where.ready(tab);
      if (where.open) await where.open(tab);
      // Late layout (fonts, the chat list, a status line) settles before measuring.
      await tab.waitForTimeout(150);
      const step = `${where.name} at ${width} px (${THEME})`;
      const problems = await tab.evaluate(layoutProblems);
      for (const problem of problems) found.push(`${step}: ${problem}`);
      if (problems.length > 0 && !SHOT_WIDTHS.has(width)) await screenshot(tab, `${THEME}-${width}px-${where.name}-problem`);
      try {
        await axe(tab, step);
      } catch (err) {
        found.push(err.message);
      }
      if (SHOT_WIDTHS.has(width)) await screenshot(tab, `${THEME}-${width}px-${where.name}`);
    }
  }
  await outside.close();
  assert(found.length === 0, `the layout does not hold:\n${found.join("\n")}`);
  if (!WIDTHS.includes(375)) return;

  // On a phone the header's "More actions" menu works from the keyboard: Enter opens it on its
  // first item, the arrows walk it, Escape closes it back to its button, and a panel opened
  // from it gives focus back to that button when it closes.
  await page.setViewportSize({ width: 375, height: 812 });
  await page.goto(setup.chat);
  await waitForAnswer(page, ANSWER_END);
  const more = page.getByRole("button", { name: "More actions" });
  const focused = () => page.evaluate(() => document.activeElement?.getAttribute("aria-label") || document.activeElement?.textContent.trim());
  await more.focus();
  await page.keyboard.press("Enter");
  assert(await more.getAttribute("aria-expanded") === "true", "Enter opens the menu");
  assert(/^Artifacts/.test(await focused()), `the menu opens on its first item (${await focused()})`);
  await page.keyboard.press("ArrowDown");
  assert(/^Documents/.test(await focused()), `ArrowDown walks the menu (${await focused()})`);
  await page.keyboard.press("Escape");
  assert(await more.getAttribute("aria-expanded") === "false", "Escape closes the menu");
  assert(await focused() === "More actions", `Escape gives focus back to the menu's button (${await focused()})`);
  await page.keyboard.press("Enter");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page.getByRole("button", { name: "Close documents" }).click();
  assert(await focused() === "More actions", `a closed panel gives focus back to the menu (${await focused()})`);
});
