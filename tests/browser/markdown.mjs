// Point 4: the reply streams token by token as sanitised Markdown (headings, lists, tables,
// highlighted code with a copy button, math, prices left alone); Enter sends and Shift+Enter
// adds a line.
import { scenario, signIn, send, screenshot, assert, until, waitForAnswer, waitIdle } from "./lib.mjs";

await scenario(async ({ page }) => {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber} (${e.sample})`));
  });
  await signIn(page);
  await send(page, "Show me everything");
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  // Streaming: the text grows in several steps before the answer is complete.
  const lengths = new Set();
  await until("the answer to grow while streaming", async () => {
    lengths.add((await answer.innerText()).length);
    return lengths.size >= 4;
  });
  await screenshot(page, "streaming");
  await waitIdle(page);
  await waitForAnswer(page, "It costs $5 and $10 today.");
  await answer.getByRole("heading", { name: "Plan" }).waitFor();
  assert((await answer.getByRole("listitem").count()) === 2, "a list of two items");
  await answer.getByRole("table").waitFor();
  await answer.getByRole("cell", { name: "2" }).waitFor();
  // Highlighted code with a copy button that copies the code.
  await until("highlighting", async () => (await answer.locator("code.hljs .hljs-keyword").count()) > 0);
  await answer.getByRole("button", { name: "Copy rust" }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert(copied.includes('fn main() { println!("hi"); }'), `copied ${copied}`);
  // Math is typeset; prices are not.
  await until("KaTeX", async () => (await answer.locator(".katex").count()) === 2);
  const katexCss = await page.evaluate(() => [...document.styleSheets].some((s) => s.href?.includes("/assets/katex-")));
  assert(katexCss, "KaTeX's stylesheet was loaded when needed");
  // Sanitised: no script ran, no handler attribute survived.
  assert((await page.evaluate(() => window.pwned)) === undefined, "no injected script ran");
  assert((await answer.locator("[onerror]").count()) === 0, "no event handler attributes");
  assert((await answer.locator("script").count()) === 0, "no script element");
  const violations = await page.evaluate(() => window.__violations);
  assert(violations.length === 0, `no CSP violations: ${violations}`);
  await screenshot(page, "rendered");

  // Shift+Enter adds a line, Enter sends.
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("line one");
  await box.press("Shift+Enter");
  await box.type("line two");
  assert((await box.inputValue()) === "line one\nline two", "Shift+Enter added a line");
  await box.press("Enter");
  await waitForAnswer(page, "Second line received.");
  await until("the message shown with its line break", async () =>
    (await page.getByRole("article", { name: "You" }).allInnerTexts()).some((t) => t.includes("line one\nline two")));
});
