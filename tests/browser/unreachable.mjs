// Point 4: a clear banner when the model server cannot be reached, naming the configured URL;
// the failed turn keeps its error under the question.
import { scenario, signIn, send, screenshot, until } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Hello?");
  const banner = page.getByRole("alert").filter({ hasText: "model server" });
  await banner.waitFor();
  await until("the URL in the banner", async () => (await banner.innerText()).includes("127.0.0.1:9"));
  await until("the cause said once", async () => (await banner.innerText()).match(/reach/g)?.length === 1);
  await screenshot(page, "unreachable");
  // The failed turn is closed by an answer that says why, and it is still there after a reload.
  await page.reload();
  const failed = page.getByRole("article", { name: "Assistant" }).last();
  await failed.getByText("The model server failed while answering.").waitFor();
  await failed.getByText("Error: could not reach the model server").waitFor();
  await failed.getByRole("button", { name: "Regenerate" }).waitFor();
});
