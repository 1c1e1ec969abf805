// Issue 35 point 3, the account page's buttons clicked: "pat" (the Rust side made the user)
// signs in in two browsers. The first makes an API key, a script uses it and the list shows
// when it was last used; the key is revoked and the script's next call is refused (the Rust
// side then tries it with the OpenAI SDK). The first browser signs the second out from the
// sessions list, and the second's requests are refused.
import { writeFileSync } from "node:fs";
import { scenario, screenshot, assert, until, BASE } from "./lib.mjs";

async function signInWithPassword(page) {
  await page.goto(`${BASE}/settings`);
  await page.getByLabel("Username").fill("pat");
  await page.getByLabel("Password").fill("pat password 1");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Account settings", level: 1 }).waitFor();
}

/// A script's call with `key`: the status of `GET /v1/models`.
async function scriptCall(key) {
  const response = await fetch(`${BASE}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  return response.status;
}

await scenario(async ({ page, browser }) => {
  const otherContext = await browser.newContext({ baseURL: BASE });
  const other = await otherContext.newPage();
  await signInWithPassword(other);
  await signInWithPassword(page);

  // A key, used by a script: the list says when.
  await page.getByLabel("Key name").fill("script key");
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = page.getByRole("textbox", { name: "New API key" });
  await secret.waitFor();
  const key = await secret.inputValue();
  assert(await scriptCall(key) === 200, "the new key works");
  await page.reload();
  const keys = page.getByRole("list", { name: "Your API keys" });
  const listed = keys.getByRole("listitem").filter({ hasText: "script key" });
  await until("the key's last use shown", async () => (await listed.innerText()).includes("last used"));
  assert(!(await listed.innerText()).includes("never used"), "a used key is not 'never used'");
  await screenshot(page, "key-used");

  // Revoked: the script's next call is refused, and the list no longer has it.
  await page.getByRole("button", { name: "Revoke script key" }).click();
  const confirm = page.getByRole("dialog", { name: "Revoke script key?" });
  await confirm.getByRole("button", { name: "Revoke" }).click();
  await page.getByRole("status").filter({ hasText: "Revoked script key." }).waitFor();
  await until("the key gone from the list", async () => (await listed.count()) === 0);
  assert(await scriptCall(key) === 401, "a revoked key is refused");

  // The other browser, signed out from this one's sessions list.
  const sessions = page.getByRole("list", { name: "Your sessions" });
  await until("both sessions listed", async () => (await sessions.getByRole("listitem").count()) === 2);
  assert(await other.evaluate(async () => (await fetch("/auth/me")).status) === 200, "the other browser is signed in");
  await sessions.getByRole("button", { name: /^Sign out (?!this session).+/ }).click();
  await page.getByRole("status").filter({ hasText: "Signed out." }).waitFor();
  await until("only this session left", async () => (await sessions.getByRole("listitem").count()) === 1);
  const after = await other.evaluate(async () => (await fetch("/auth/me")).status);
  assert(after === 401, `the signed-out browser's requests are refused: ${after}`);
  await other.reload();
  await other.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  assert(await page.evaluate(async () => (await fetch("/auth/me")).status) === 200, "this browser stays signed in");
  await screenshot(page, "other-signed-out");
  await otherContext.close();
  writeFileSync(process.env.OUT_FILE, JSON.stringify({ key }));
});
