// Point 2: the documents sidebar (docs/spec.md#documents-sidebar): a file picker and a drop zone;
// tus uploads with a progress bar, cancel, and resume after a dropped connection; the list
// newest first with filename, size and type; a spinner, a checkmark, an error mark whose
// tooltip gives the reason, and the truncation warning; delete with confirmation; the toolbar
// badge counting up and down without a reload; refusals shown with their limit. The Rust test
// sets the limits: 6 MB per file, 2 documents per chat, 20,000 characters of text per file.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

const MB = 1024 * 1024;

await scenario(async ({ page, problems }) => {
  const requests = [];
  page.on("request", (request) => {
    if (request.url().includes("/uploads")) requests.push(request.method());
  });
  await signIn(page);
  await send(page, "Let us read some files");
  await waitForAnswer(page, "Ready for your files.");
  await waitIdle(page);

  const toolbar = (count) => page.getByRole("button", { name: count ? `Documents ${count}` : "Documents", exact: true });
  await toolbar(0).click();
  const panel = page.getByRole("region", { name: "Documents" });
  await panel.getByText("Up to 6 MB per file.").waitFor();
  await panel.getByText(/No documents yet/).waitFor();
  await axe(page, "documents sidebar (empty)");
  await screenshot(page, "empty");
  const list = panel.getByRole("list", { name: "Documents in this chat" });
  const row = (name) => list.getByRole("listitem").filter({ hasText: name });

  // The file picker: a text file becomes searchable (a checkmark); the badge counts it.
  const picked = page.waitForEvent("filechooser");
  await panel.getByRole("button", { name: "Choose files…" }).click();
  await (await picked).setFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("Colloquy notes: the launch is on Tuesday.\n") });
  await row("notes.txt").getByRole("img", { name: "Searchable" }).waitFor();
  await toolbar(1).waitFor();
  assert(/\d+ bytes · Text/.test(await row("notes.txt").innerText()), `size and type are shown: ${await row("notes.txt").innerText()}`);

  // Drag and drop: a "PDF" that cannot be read passes the upload and fails processing; its
  // error mark's tooltip (and accessible description) gives the reason.
  const dropped = await page.evaluateHandle(() => {
    const data = new DataTransfer();
    data.items.add(new File(["%PDF-1.4 not really a PDF"], "report.pdf", { type: "application/pdf" }));
    return data;
  });
  const zone = panel.getByText("Drag files here, or");
  await zone.dispatchEvent("dragenter", { dataTransfer: dropped });
  await zone.dispatchEvent("dragover", { dataTransfer: dropped });
  await zone.dispatchEvent("drop", { dataTransfer: dropped });
  const failedMark = row("report.pdf").getByRole("img", { name: "Processing failed" });
  await failedMark.waitFor();
  await toolbar(2).waitFor();
  const described = await failedMark.evaluate((mark) => document.getElementById(mark.getAttribute("aria-describedby"))?.textContent ?? "");
  assert(/PDF/.test(described), `the error mark is described by the reason: ${described}`);
  await failedMark.hover();
  const tooltip = panel.getByRole("tooltip");
  await tooltip.waitFor();
  assert((await tooltip.innerText()) === described, "the tooltip shows the same reason");
  const order = await list.getByRole("listitem").allInnerTexts();
  assert(order[0].includes("report.pdf") && order[1].includes("notes.txt"), `newest first: ${order}`);
  await axe(page, "documents sidebar (a failed document)");
  await screenshot(page, "failed-document");

  // Refusals, with the limit, before any request: too large, and one too many (the list says
  // how many a chat may hold).
  const before = requests.filter((m) => m === "POST").length;
  const big = page.waitForEvent("filechooser");
  await panel.getByRole("button", { name: "Choose files…" }).click();
  await (await big).setFiles({ name: "huge.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(7 * MB, 1) });
  await panel.getByRole("alert").filter({ hasText: "huge.bin is 7 MB; the most a document may have is 6 MB." }).waitFor();
  assert(requests.filter((m) => m === "POST").length === before, "a file over the limit is refused before it is sent");
  const third = page.waitForEvent("filechooser");
  await panel.getByRole("button", { name: "Choose files…" }).click();
  await (await third).setFiles({ name: "more.txt", mimeType: "text/plain", buffer: Buffer.from("more") });
  await panel.getByRole("alert").filter({ hasText: "more.txt: this chat may hold at most 2 documents; delete one first." }).waitFor();
  assert(requests.filter((m) => m === "POST").length === before, "one file too many is refused before it is sent");
  await screenshot(page, "refusals");

  // Delete asks first: Cancel keeps the document, Delete removes it; the badge counts down.
  await row("report.pdf").getByRole("button", { name: "Delete report.pdf" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete report.pdf?" });
  await confirm.waitFor();
  await screenshot(page, "delete-confirmation");
  await confirm.getByRole("button", { name: "Cancel" }).click();
  assert(await row("report.pdf").isVisible(), "cancelled: the document stays");
  await row("report.pdf").getByRole("button", { name: "Delete report.pdf" }).click();
  await confirm.getByRole("button", { name: "Delete" }).click();
  await toolbar(1).waitFor();
  await until("report.pdf gone from the list", async () => (await row("report.pdf").count()) === 0);

  // Cancel: a slow upload is stopped mid-way and terminated on the server (tus DELETE); the
  // badge counted it while it existed and counts it out again.
  const slow = async (route) => {
    if (route.request().method() !== "PATCH") return route.continue();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    return route.continue().catch(() => {});
  };
  await page.route("**/uploads/*", slow);
  const cancelled = page.waitForEvent("filechooser");
  await panel.getByRole("button", { name: "Choose files…" }).click();
  await (await cancelled).setFiles({ name: "cancel-me.txt", mimeType: "text/plain", buffer: Buffer.alloc(3 * MB, 97) });
  await panel.getByRole("progressbar", { name: "Upload of cancel-me.txt" }).waitFor();
  await toolbar(2).waitFor();
  await panel.getByRole("button", { name: "Cancel upload of cancel-me.txt" }).click();
  await until("the cancelled upload gone", async () =>
    (await panel.getByRole("progressbar", { name: "Upload of cancel-me.txt" }).count()) === 0 && (await row("cancel-me.txt").count()) === 0);
  await toolbar(1).waitFor();
  await until("a tus termination sent", async () => requests.includes("DELETE"));
  await page.unroute("**/uploads/*", slow);

  // A 4 MB file in 1 MB chunks; the connection drops on the second chunk (twice), the upload
  // asks the server for its offset (HEAD) and continues from there to the end.
  let patches = 0;
  let drops = 0;
  const flaky = async (route) => {
    if (route.request().method() !== "PATCH") return route.continue();
    patches++;
    if (patches >= 2 && drops < 2) {
      drops++;
      return route.abort("connectionreset");
    }
    return route.continue();
  };
  await page.route("**/uploads/*", flaky);
  const line = "Line of the big file, to be cut at the text limit.\n";
  const text = Buffer.from(line.repeat(Math.ceil((4 * MB) / line.length))).subarray(0, 4 * MB);
  const headsBefore = requests.filter((m) => m === "HEAD").length;
  const large = page.waitForEvent("filechooser");
  await panel.getByRole("button", { name: "Choose files…" }).click();
  await (await large).setFiles({ name: "big.txt", mimeType: "text/plain", buffer: text });
  const progress = panel.getByRole("progressbar", { name: "Upload of big.txt" });
  await progress.waitFor();
  await panel.getByText(/connection lost, reconnecting… \(attempt \d\)/).waitFor();
  const sent = Number(await progress.evaluate((bar) => bar.value));
  assert(sent >= MB && sent < 4 * MB, `the bar shows the part sent before the drop: ${sent}`);
  await screenshot(page, "reconnecting");
  await row("big.txt").getByRole("img", { name: "Searchable" }).waitFor({ timeout: 30000 });
  assert(drops === 2, `two PATCHes were dropped (${drops})`);
  assert(requests.filter((m) => m === "HEAD").length > headsBefore, "the offset was asked of the server after the drop");
  await page.unroute("**/uploads/*", flaky);
  await toolbar(2).waitFor();
  const bigRow = await row("big.txt").innerText();
  assert(bigRow.includes("4 MB · Text"), `the size and type of the resumed file: ${bigRow}`);
  assert(/Truncated: .*truncated/.test(bigRow), `the truncation warning is shown: ${bigRow}`);
  await axe(page, "documents sidebar (resumed, truncated)");
  await screenshot(page, "resumed-and-truncated");

  // The count and the list are the server's: the same after a reload.
  await page.reload();
  await toolbar(2).click();
  await row("big.txt").getByRole("img", { name: "Searchable" }).waitFor();
  await row("notes.txt").getByRole("img", { name: "Searchable" }).waitFor();
  await screenshot(page, "after-reload");

  // The dropped connections were this scenario's doing, not the page's.
  for (let i = problems.length - 1; i >= 0; i--) {
    if (/ERR_CONNECTION_RESET|ERR_FAILED|ERR_ABORTED/.test(problems[i])) problems.splice(i, 1);
  }
});
