// Issue 35 point 3: the account page. Sign in, open Account settings, set a display name and
// a time zone,
// create an API key (shown once, copied with its button), see it listed by prefix, and hand
// the key and the page's own Python example to the Rust side, which runs it with the official
// OpenAI SDK. axe finds nothing serious at desktop width and at 375 px.
import { writeFileSync } from "node:fs";
import { scenario, signIn, screenshot, assert, until, axe } from "./lib.mjs";

await scenario(async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Account settings" }).click();
  await page.getByRole("heading", { name: "Account settings", level: 1 }).waitFor();
  await page.getByRole("heading", { name: "Sessions" }).waitFor();
  await page.getByRole("list", { name: "Your sessions" }).getByText("(this browser)").waitFor();
  await axe(page, "account page, desktop");
  await screenshot(page, "account");

  // One Save for the profile: the display name and the time zone schedules take when made
  // without one (the Rust side checks it was stored).
  assert(await page.getByRole("region", { name: "Profile" }).getByRole("button", { name: /^Save/ }).count() === 1, "one Save for the profile");
  await page.getByLabel("Display name").fill("Ada Admin");
  await page.getByLabel("Time zone").fill("Europe/Paris");
  await page.getByRole("button", { name: "Save profile" }).click();
  await page.getByRole("status").filter({ hasText: "Saved. Schedules default to Europe/Paris." }).waitFor();
  await page.getByRole("navigation", { name: "Chats" }).getByText("Ada Admin").waitFor();

  await page.getByLabel("Key name").fill("my script");
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = page.getByRole("textbox", { name: "New API key" });
  await secret.waitFor();
  const key = await secret.inputValue();
  assert(key.startsWith("cq_"), `a key was shown: ${key}`);
  await page.getByText("it is not shown again").waitFor();
  await page.getByRole("button", { name: "Copy key" }).click();
  await page.getByRole("status").filter({ hasText: "Copied." }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert(copied === key, "the Copy key button copied the key");
  const keys = page.getByRole("list", { name: "Your API keys" });
  await until("the new key listed by its prefix", async () => (await keys.innerText()).includes(`${key.slice(0, 10)}…`));
  const listed = await keys.getByRole("listitem").filter({ hasText: "my script" }).innerText();
  assert(listed.includes("never used"), `a new key was never used: ${listed}`);
  assert(await page.getByRole("button", { name: "Revoke my script" }).isVisible(), "the key can be revoked");

  const python = page.getByRole("region", { name: "Python example" });
  const example = await python.innerText();
  assert(example.includes(`base_url="${process.env.COLLOQUY_URL}/v1"`), `the base URL is filled in: ${example}`);
  await screenshot(page, "key-created");

  // Reloaded, the key is listed but its secret is gone for good.
  await page.reload();
  await page.getByRole("heading", { name: "API keys" }).waitFor();
  await until("the key listed after a reload", async () => (await keys.innerText()).includes("my script"));
  assert((await page.getByRole("textbox", { name: "New API key" }).count()) === 0, "the secret is not shown again");

  await page.setViewportSize({ width: 375, height: 800 });
  await axe(page, "account page, 375 px");
  await screenshot(page, "account-narrow");
  writeFileSync(process.env.OUT_FILE, JSON.stringify({ key, example }));
});
