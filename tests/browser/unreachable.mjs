// Point 4: a clear banner when the model server cannot be reached, naming the configured URL.
import { scenario, signIn, send, screenshot, until } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await send(page, "Hello?");
  const banner = page.getByRole("alert").filter({ hasText: "model server" });
  await banner.waitFor();
  await until("the URL in the banner", async () => (await banner.innerText()).includes("127.0.0.1:9"));
  await screenshot(page, "unreachable");
});
