// The artifacts panel: the upstream (tests/api/browser.rs) creates one artifact of every type
// from tests/browser/artifacts.json, then a version 2 of the code and of the diagram (a broken
// one). The panel opens live as they arrive, lists them, draws each by its type, switches
// versions, copies and downloads; an HTML artifact runs sandboxed (no cookie, no same-origin
// access, no top navigation) and an SVG's handlers never run. Opened from an answer's button,
// it shows the answer's version; Escape closes it and focus returns.
import { readFileSync } from "node:fs";
import { scenario, signIn, send, screenshot, assert, axe, until, waitForAnswer, waitIdle, BASE } from "./lib.mjs";

const fixture = JSON.parse(readFileSync(new URL("./artifacts.json", import.meta.url), "utf8"));
const created = (identifier) => fixture.created.find((a) => a.identifier === identifier);
const updated = (identifier) => fixture.updated.find((a) => a.identifier === identifier);

await scenario(async ({ page, context, problems }) => {
  const requests = [];
  page.on("request", (request) => requests.push(new URL(request.url()).pathname));
  // What the HTML artifact's script reports, heard from the first page on.
  await page.addInitScript(() => {
    window.__probes = [];
    window.addEventListener("message", (event) => {
      if (event.data && event.data.probe === "sandbox") window.__probes.push(event.data);
    });
  });
  await signIn(page);
  // A cookie the app's own scripts can read, so "the sandbox cannot" means something.
  await context.addCookies([{ name: "probe", value: "visible-to-the-app", url: BASE }]);
  assert((await page.evaluate(() => document.cookie)).includes("probe=visible-to-the-app"), "the app page reads its cookie");

  await send(page, "Make one artifact of every kind");
  // The first x_artifact.created opens the panel, without taking the focus from the composer.
  const panel = page.getByRole("dialog", { name: "Artifacts" });
  await panel.waitFor();
  assert((await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))) === "Message", "focus stays in the composer while the panel opens live");
  await screenshot(page, "live");
  await waitIdle(page);
  await waitForAnswer(page, "Seven artifacts are ready");
  const chatUrl = page.url();

  // The last event was the diagram's broken version 2: its error and its source.
  await panel.getByRole("heading", { name: "Flow", level: 3 }).waitFor();
  await panel.getByRole("alert").filter({ hasText: "The diagram could not be drawn" }).waitFor();
  const source = panel.getByRole("region", { name: "Source of Flow" });
  assert((await source.textContent()) === updated("flow.mmd").content, "the broken diagram's source, as text");
  assert((await panel.getByRole("combobox", { name: "Version" }).inputValue()) === "2", "the live panel shows the new version");
  await screenshot(page, "mermaid-broken");

  // The list: every artifact, most recently updated first, with its type and version.
  const toggle = page.getByRole("button", { name: "Artifacts (7)" });
  await toggle.waitFor();
  const list = panel.getByRole("list", { name: "Artifacts of this chat" });
  const items = await list.getByRole("button").allInnerTexts();
  assert(items.length === 7, `seven artifacts listed: ${items}`);
  assert(/^Flow\s+Diagram, version 2$/.test(items[0]) && /^Fibonacci\s+Python, version 2$/.test(items[1]), `the updated ones first: ${items}`);
  assert(items.some((t) => /^Settings\s+JSON, version 1$/.test(t)), `types and versions in words: ${items}`);
  const open = async (title) => {
    await list.getByRole("button", { name: new RegExp(`^${title} `) }).click();
    await panel.getByRole("heading", { name: title, level: 3 }).waitFor();
  };

  // The diagram's version 1 parses: drawn as an image.
  await panel.getByRole("combobox", { name: "Version" }).selectOption("1");
  const diagram = panel.getByRole("img", { name: "Diagram: Flow" });
  await diagram.waitFor();
  await until("the diagram drawn", () => diagram.evaluate((img) => img.complete && img.naturalWidth > 0));
  assert((await diagram.getAttribute("src")).startsWith("blob:"), "the diagram is an image from a blob: URL");
  await axe(page, "artifacts panel with a diagram");
  await screenshot(page, "mermaid");

  // Markdown, rendered.
  await open("Release notes");
  await panel.getByRole("heading", { name: "Release notes", level: 1 }).waitFor();
  await panel.getByRole("listitem").filter({ hasText: "A panel for artifacts" }).waitFor();
  await axe(page, "artifacts panel with Markdown");
  await screenshot(page, "markdown");

  // Code, highlighted, in two versions; Copy and Download give the version shown.
  await open("Fibonacci");
  const versions = panel.getByRole("combobox", { name: "Version" });
  assert((await versions.inputValue()) === "2", "the latest version is shown first");
  const options = await versions.getByRole("option").allInnerTexts();
  assert(options.join("|") === "Version 2 (latest)|Version 1", `versions 2 and 1: ${options}`);
  const code = panel.locator("pre code");
  await until("Python highlighted", async () => (await panel.locator("code.hljs .hljs-keyword").count()) > 0);
  assert((await code.textContent()) === updated("fibonacci.py").content, "version 2's code");
  const download = panel.getByRole("link", { name: "Download" });
  assert(/\/artifacts\/[^/]+\/raw$/.test(await download.getAttribute("href")), `the latest downloads from /raw: ${await download.getAttribute("href")}`);
  const [file] = await Promise.all([page.waitForEvent("download"), download.click()]);
  assert(readFileSync(await file.path(), "utf8") === updated("fibonacci.py").content, "the download is version 2");
  await panel.getByRole("button", { name: "Copy" }).click();
  await panel.getByRole("status").filter({ hasText: "Copied." }).waitFor();
  assert((await page.evaluate(() => navigator.clipboard.readText())) === updated("fibonacci.py").content, "Copy copies version 2");
  await screenshot(page, "code-v2");
  await versions.selectOption("1");
  await until("version 1's code", async () => (await code.textContent()) === created("fibonacci.py").content);
  assert(/\/versions\/1\/raw$/.test(await download.getAttribute("href")), "version 1 downloads from its own /raw");
  await until("version 1 highlighted", async () => (await panel.locator("code.hljs .hljs-keyword").count()) > 0);
  await screenshot(page, "code-v1");

  // Plain text, as text (highlighted as plain text), and JSON indented.
  await open("Todo list");
  await until("the list's text", async () => (await code.textContent()) === created("todo.txt").content);
  await screenshot(page, "plain");
  await open("Settings");
  const pretty = JSON.stringify(JSON.parse(created("settings.json").content), null, 2);
  await until("pretty JSON", async () => (await code.textContent()) === pretty);
  await until("JSON highlighted", async () => (await panel.locator("code.hljs .hljs-attr").count()) > 0);
  await screenshot(page, "json");

  // SVG: an <img> of the preview; its onload handler and script never run.
  await open("Badge");
  const badge = panel.getByRole("img", { name: "Badge" });
  await until("the badge loaded", () => badge.evaluate((img) => img.complete && img.naturalWidth === 120));
  assert(/\/artifacts\/[^/]+\/preview$/.test(await badge.getAttribute("src")), "the SVG comes from /preview");
  assert((await panel.locator("svg").count()) === 0, "no SVG markup in the page's DOM");
  await page.waitForTimeout(300);
  assert((await page.title()) !== "pwned", "the SVG's handlers did not run");
  assert(!requests.includes("/pwned"), "the SVG fetched nothing");
  await screenshot(page, "svg");

  // HTML: a sandboxed frame of the preview. Its script reports what it could do.
  await page.evaluate(() => (window.__probes = []));
  await open("Sandbox probe");
  const frame = panel.locator("iframe");
  assert((await frame.getAttribute("sandbox")) === "allow-scripts", "sandbox is exactly allow-scripts");
  assert(/\/artifacts\/[^/]+\/preview$/.test(await frame.getAttribute("src")), "the page comes from /preview, not srcdoc");
  assert((await frame.getAttribute("srcdoc")) === null, "no srcdoc");
  await panel.frameLocator("iframe").getByRole("heading", { name: "Sandboxed page" }).waitFor();
  const probe = await until("the sandboxed page's report", () => page.evaluate(() => window.__probes[0]));
  assert(probe.origin === "null", `the frame's origin is opaque: ${probe.origin}`);
  assert(probe.cookieError !== null || !probe.cookie, `the frame could not read a cookie: ${JSON.stringify(probe)}`);
  assert(!String(probe.cookie ?? "").includes("probe="), "the app's cookie is not readable in the frame");
  assert(probe.parentReadable === false, "the frame cannot reach the app's document");
  await page.waitForTimeout(500);
  assert(page.url() === chatUrl, `the top page did not navigate: ${page.url()}`);
  assert(!requests.includes("/evil"), "no request for /evil");
  await screenshot(page, "html");

  // Escape closes; focus returns to the button that opened the panel.
  await toggle.click();
  await toggle.click();
  await panel.waitFor();
  await page.keyboard.press("Escape");
  await panel.waitFor({ state: "detached" });
  assert((await toggle.getAttribute("aria-expanded")) === "false", "the toggle says the panel is shut");
  assert(await toggle.evaluate((el) => el === document.activeElement), "focus is back on the Artifacts button");

  // An answer's artifact button opens the panel on that artifact at the answer's version.
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  const openFlow = answer.getByRole("button", { name: "Open Flow" });
  await openFlow.click();
  await panel.getByRole("heading", { name: "Flow", level: 3 }).waitFor();
  assert((await panel.getByRole("combobox", { name: "Version" }).inputValue()) === "2", "the answer's version");
  assert(await panel.getByRole("heading", { name: "Flow", level: 3 }).evaluate((el) => el === document.activeElement), "focus moves to the artifact");
  await page.keyboard.press("Escape");
  await panel.waitFor({ state: "detached" });
  assert(await openFlow.evaluate((el) => el === document.activeElement), "focus returns to the answer's button");

  // After a reload: the count, and the stored answer's buttons.
  await page.reload();
  await waitForAnswer(page, "Seven artifacts are ready");
  await page.getByRole("button", { name: "Artifacts (7)" }).waitFor();
  assert(!(await panel.isVisible()), "a reload does not open the panel");
  await page.getByRole("article", { name: "Assistant" }).last().getByRole("button", { name: "Open Fibonacci" }).click();
  await until("the stored answer's version", async () => (await panel.locator("pre code").textContent()) === updated("fibonacci.py").content);

  // Narrow screens: the panel is a drawer; nothing scrolls sideways.
  await page.setViewportSize({ width: 375, height: 740 });
  await panel.getByRole("heading", { name: "Fibonacci", level: 3 }).waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 0, `no sideways scrolling at 375 px (${overflow})`);
  await axe(page, "artifacts drawer at 375 px");
  await screenshot(page, "drawer-375px");
  await panel.getByRole("button", { name: "Close" }).click();
  await panel.waitFor({ state: "detached" });

  // Expected console messages: the browser's refusal of the sandboxed frame's navigation, and
  // its refusals of the inline styles mermaid puts on its hidden layout element (the page's
  // CSP holds; the diagram itself is the image checked above).
  const expected = /navigat|sandbox|Applying inline style violates the following Content Security Policy directive 'style-src 'self''/i;
  for (let i = problems.length - 1; i >= 0; i--) if (expected.test(problems[i])) problems.splice(i, 1);
});
