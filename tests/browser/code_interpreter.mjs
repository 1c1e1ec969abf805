// Issue 46: the code interpreter in a chat. The chat's settings turn it on (a checkbox beside
// the research tools); its call's card shows the code (highlighted as Python), what it printed,
// the chart it drew (while the run goes on; once the answer is stored, the chart is the
// answer's own image) and the file it wrote, whose link downloads the PNG with the page's own
// session. After a reload the card is drawn from the stored record and result. The Rust test
// made the chat (CHAT_ID) and scripted the model to run CODE, then answer after a pause.
import { scenario, signIn, send, screenshot, assert, axe, until, waitForAnswer, waitIdle } from "./lib.mjs";

const CODE = process.env.CODE;
const ANSWER = "The mean is 2.0; the chart is below.";
const FILE_URL = /^\/v1\/containers\/cntr_[0-9a-f]{32}\/files\/cfile_[0-9a-f]{32}\/content$/;
const PNG_SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];

/// Opens the answer's tool calls (a redraw may fold them again: open until they stay open).
async function unfold(answer) {
  const details = answer.locator("details.tools");
  await until("the tool calls unfolded", async () => {
    if (!(await details.evaluate((d) => d.open))) await details.locator("summary").click();
    return details.evaluate((d) => d.open);
  });
}

/// The card's code, output and file link; returns the link's URL.
async function checkCard(page, answer) {
  const code = answer.getByRole("figure", { name: "Python code" });
  await code.waitFor();
  await until("the code shown whole", async () => (await code.locator("code").innerText()).trim() === CODE.trim());
  await until("the code highlighted as Python", async () => (await code.locator("code.hljs .hljs-keyword").count()) > 0);
  const output = answer.getByRole("figure", { name: "Output" });
  await until("the printed output", async () => (await output.innerText()).includes("mean=2.0"));
  assert((await answer.getByRole("figure", { name: /Error/ }).count()) === 0, "no error is shown for a call that ran");
  const link = answer.getByRole("link", { name: /^Download chart\.png \(\d+(\.\d)? KB\)$/ });
  await link.waitFor();
  const href = await link.getAttribute("href");
  assert(FILE_URL.test(href), `the file's link: ${href}`);
  assert((await link.getAttribute("download")) === "chart.png", "the link downloads under the file's name");
  // Fetched as the page would: the session's cookie authenticates /v1.
  const fetched = await page.evaluate(async (url) => {
    const response = await fetch(url);
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { status: response.status, type: response.headers.get("content-type"), head: Array.from(bytes.slice(0, 8)), size: bytes.length };
  }, href);
  assert(fetched.status === 200, `the file downloads (${fetched.status})`);
  assert(fetched.type === "image/png", `the file is served as a PNG (${fetched.type})`);
  assert(JSON.stringify(fetched.head) === JSON.stringify(PNG_SIGNATURE), `the file is a PNG (${fetched.head})`);
  assert(fetched.size > 1000, `the file is the whole chart (${fetched.size} bytes)`);
  return href;
}

await scenario(async ({ page }) => {
  await signIn(page);
  await page.goto(`/c/${process.env.CHAT_ID}`);
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  // The agent's tools have loaded (a tool it does not allow could not be chosen): the default
  // agent lets a chat choose the code interpreter.
  await page.getByRole("list", { name: "Tools this agent allows:" }).getByText("code_interpreter", { exact: true }).waitFor();
  await page.getByRole("switch", { name: "Tools" }).check();
  const box = page.getByRole("checkbox", { name: "Code interpreter (Python)" });
  assert(!(await box.isChecked()) && !(await box.isDisabled()), "the code interpreter is off until chosen, and may be");
  await box.check();
  await axe(page, "settings with the code interpreter");
  await screenshot(page, "settings");
  await page.getByRole("button", { name: "Settings", exact: true }).click();

  await send(page, "Plot 1, 2, 3 and tell me the mean.");
  // While the model writes its answer, the card shows the code, its output and its chart.
  const running = page.locator("article.live");
  await running.getByText("1 tool call").waitFor();
  await unfold(running);
  const figure = running.getByRole("img", { name: "Figure 1 of 1 drawn by the code" });
  await figure.waitFor();
  const width = await figure.evaluate(async (img) => {
    await img.decode().catch(() => {});
    return img.naturalWidth;
  });
  assert(width > 100, `the chart is drawn in the card (naturalWidth ${width})`);
  assert((await figure.getAttribute("src")).startsWith("data:image/png;base64,"), "the chart is the event's PNG");
  await until("the live card's output", async () => (await running.getByRole("figure", { name: "Output" }).innerText()).includes("mean=2.0"));
  await axe(page, "code interpreter card (live)");
  await screenshot(page, "card-live");

  await waitForAnswer(page, ANSWER);
  await waitIdle(page);
  const answer = page.getByRole("article", { name: "Assistant" }).last();
  await answer.getByRole("img", { name: "Generated image 1 of 1" }).waitFor();
  await unfold(answer);
  const href = await checkCard(page, answer);
  assert((await answer.getByRole("img", { name: /drawn by the code/ }).count()) === 0, "the chart is shown once, with the answer");
  // The link is a download: the browser saves the chart under its name.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    answer.getByRole("link", { name: /^Download chart\.png/ }).click(),
  ]);
  assert(download.suggestedFilename() === "chart.png", `downloaded as ${download.suggestedFilename()}`);
  assert((await download.failure()) === null, `the download completed (${await download.failure()})`);
  await axe(page, "code interpreter card");
  await screenshot(page, "card");

  // After a reload: the stored record and result draw the same card; the chart is the answer's.
  await page.reload();
  await waitForAnswer(page, ANSWER);
  const stored = page.getByRole("article", { name: "Assistant" }).last();
  const picture = stored.getByRole("img", { name: "Generated image 1 of 1" });
  await picture.waitFor();
  const drawn = await picture.evaluate(async (img) => {
    if (!img.complete) await new Promise((done) => img.addEventListener("load", done, { once: true }));
    return img.naturalWidth;
  });
  assert(drawn > 100, `the chart is kept with the answer (width ${drawn})`);
  await unfold(stored);
  assert((await checkCard(page, stored)) === href, "the same file after the reload");
  assert((await stored.getByRole("img", { name: /drawn by the code/ }).count()) === 0, "the chart is shown once, with the answer");
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  assert(await page.getByRole("checkbox", { name: "Code interpreter (Python)" }).isChecked(), "the choice is the chat's, kept");
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  await axe(page, "code interpreter card after a reload");
  await screenshot(page, "card-after-reload");

  // Code that raises: its card shows what it printed, then the error, marked as one.
  await send(page, "Now divide by zero.");
  await waitForAnswer(page, "Dividing by zero fails.");
  await waitIdle(page);
  const failed = page.getByRole("article", { name: "Assistant" }).last();
  await unfold(failed);
  const error = failed.getByRole("figure", { name: "Error", exact: true });
  await until("the error shown", async () => (await error.innerText()).includes("ZeroDivisionError"));
  await until("what it printed first", async () => (await failed.getByRole("figure", { name: "Output" }).innerText()).includes("before"));
  assert((await failed.getByRole("link", { name: /^Download / }).count()) === 0, "no file was written");
  await axe(page, "code interpreter error");
  await screenshot(page, "card-error");

  // On a phone, in the dark theme: the code scrolls in its box, not the page.
  await page.setViewportSize({ width: 375, height: 812 });
  await page.emulateMedia({ colorScheme: "dark" });
  await stored.getByRole("figure", { name: "Python code" }).scrollIntoViewIfNeeded();
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert(wide <= 375, `nothing scrolls sideways on a phone (${wide} px)`);
  await axe(page, "code interpreter card (phone, dark)");
  await screenshot(page, "card-phone-dark");
});
