// Issue 30, point 2: images in the composer. What is not an image or is too large is refused
// before any upload, with the reason shown; a dropped image shows as a thumbnail and its
// remove button takes it out again; a pasted image goes with the message, and its thumbnail
// shows in the history, also after a reload; a new chat may begin with an image alone. The
// Rust test sets the limit to 2,000 bytes.
import { scenario, signIn, send, screenshot, assert, until, axe, waitForAnswer, waitIdle } from "./lib.mjs";

// A 1×1 transparent PNG.
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==";

/// A `DataTransfer` holding one PNG named `name`, made in the page.
function transferOf(page, name) {
  return page.evaluateHandle(([b64, file]) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], file, { type: "image/png" }));
    return data;
  }, [PIXEL, name]);
}

/// Pastes a PNG named `name` into `box`, as a clipboard paste does.
function pasteInto(box, name) {
  return box.evaluate((el, [b64, file]) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], file, { type: "image/png" }));
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, [PIXEL, name]);
}

await scenario(async ({ page }) => {
  const uploads = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().includes("/attachments")) uploads.push(request.url());
  });
  await signIn(page);
  await send(page, "Hello there");
  await waitForAnswer(page, "Hello! Send me a picture.");
  await waitIdle(page);

  const box = page.getByRole("textbox", { name: "Message" });
  const tray = page.getByRole("list", { name: "Images to send" });

  // The picker: a text file and an image over the limit are refused, before any upload.
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Attach image" }).click();
  await (await chooser).setFiles([
    { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("just text") },
    { name: "huge.png", mimeType: "image/png", buffer: Buffer.concat([Buffer.from(PIXEL, "base64"), Buffer.alloc(3000)]) },
  ]);
  const refusal = page.getByRole("alert").filter({ hasText: "notes.txt is not an image" });
  await refusal.waitFor();
  const said = await refusal.innerText();
  assert(said.includes("huge.png is too large") && said.includes("at most 2 KB"), `the refusal says why: ${said}`);
  assert(uploads.length === 0, "nothing refused was uploaded");
  await screenshot(page, "refused");

  // A drop adds an image as a thumbnail; its remove button takes it out.
  const dropped = await transferOf(page, "dropped.png");
  const form = page.getByRole("form", { name: "Send a message" });
  await form.dispatchEvent("dragover", { dataTransfer: dropped });
  await form.dispatchEvent("drop", { dataTransfer: dropped });
  await tray.getByRole("img", { name: "Image 1 to send: dropped.png" }).waitFor();
  await page.getByRole("button", { name: "Remove image dropped.png" }).click();
  await until("the tray is empty", async () => !(await tray.isVisible()));

  // A paste into the composer attaches the image and leaves the text alone.
  await box.fill("What is in this picture?");
  await pasteInto(box, "pasted.png");
  await tray.getByRole("img", { name: "Image 1 to send: pasted.png" }).waitFor();
  await until("the pasted image is uploaded", async () => uploads.length === 2);
  assert((await box.inputValue()) === "What is in this picture?", "the paste kept the text as it was");
  await axe(page, "composer with an image");
  await screenshot(page, "pasted");

  await box.press("Enter");
  await waitForAnswer(page, "A single transparent pixel.");
  await waitIdle(page);
  const question = page.getByRole("article", { name: "You" }).last();
  await question.getByRole("img", { name: "Attached image 1 of 1" }).waitFor();
  assert((await question.innerText()).includes("What is in this picture?"), "the text is shown beside the image");
  assert(!(await tray.isVisible()), "the tray is empty once sent");

  // After a reload the history still shows the thumbnail, loaded from the server.
  await page.reload();
  const thumbnail = page.getByRole("article", { name: "You" }).last().getByRole("img", { name: "Attached image 1 of 1" });
  await thumbnail.waitFor();
  await until("the thumbnail is loaded", async () => thumbnail.evaluate((img) => img.complete && img.naturalWidth === 1));
  const source = await thumbnail.getAttribute("src");
  assert(/^\/chat\/api\/[^/]+\/attachments\/att_[0-9a-f]{32}$/.test(source), `served by the chat API: ${source}`);
  await axe(page, "history with an image");
  await screenshot(page, "after-reload");

  // A new chat may begin with an image and no text: it is uploaded once the chat exists.
  await page.getByRole("button", { name: "New chat" }).click();
  await page.getByRole("heading", { name: "New chat" }).waitFor();
  await pasteInto(box, "first.png");
  await tray.getByRole("img", { name: "Image 1 to send: first.png" }).waitFor();
  await box.press("Enter");
  await waitForAnswer(page, "Another pixel.");
  await waitIdle(page);
  assert(/\/c\/[0-9a-f-]{36}$/.test(page.url()), `the new chat has its own URL: ${page.url()}`);
  await page.getByRole("article", { name: "You" }).getByRole("img", { name: "Attached image 1 of 1" }).waitFor();
  await screenshot(page, "new-chat");
});
