// Issue 35 point 3: a password change on the account page needs the current password and
// signs the other browser out. Two browser contexts sign in as "pat" (the Rust side made the
// user); the first lists both sessions, changes the password (axe checks the page then); the
// second is back at sign-in.
import { scenario, screenshot, assert, until, axe, BASE } from "./lib.mjs";

async function signInWithPassword(page, password) {
  await page.goto(`${BASE}/settings`);
  await page.getByLabel("Username").fill("pat");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Account settings", level: 1 }).waitFor();
}

await scenario(async ({ page, browser, problems }) => {
  const otherContext = await browser.newContext({ baseURL: BASE });
  const other = await otherContext.newPage();
  await signInWithPassword(other, "old password 1");
  await signInWithPassword(page, "old password 1");

  const sessions = page.getByRole("list", { name: "Your sessions" });
  await until("both sessions listed", async () => (await sessions.getByRole("listitem").count()) === 2);
  await page.getByRole("button", { name: "Sign out this session" }).waitFor();

  // The wrong current password changes nothing.
  await page.getByLabel("Current password", { exact: true }).fill("not the password");
  await page.getByLabel("New password", { exact: true }).fill("new password 2");
  await page.getByLabel("Repeat the new password", { exact: true }).fill("new password 2");
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByRole("status").filter({ hasText: "Not changed: the current password is not right" }).waitFor();
  // The refusal's 400 is the browser's console line for the expected answer, not a fault.
  const refused = problems.findIndex((p) => p.includes("status of 400"));
  assert(refused >= 0, "the wrong password was refused by the server");
  problems.splice(refused, 1);

  await page.getByLabel("Current password", { exact: true }).fill("old password 1");
  await page.getByLabel("New password", { exact: true }).fill("new password 2");
  await page.getByLabel("Repeat the new password", { exact: true }).fill("new password 2");
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByRole("status").filter({ hasText: "Password changed. 1 other session was signed out." }).waitFor();
  await until("only this session left", async () => (await sessions.getByRole("listitem").count()) === 1);
  await axe(page, "the settings page after a password change");
  await screenshot(page, "password-changed");

  // The other browser is signed out: its next request lands on the sign-in page.
  await other.reload();
  await other.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  await other.getByLabel("Username").fill("pat");
  await other.getByLabel("Password").fill("old password 1");
  await other.getByRole("button", { name: "Sign in" }).click();
  await other.getByRole("alert").filter({ hasText: "Wrong username or password" }).waitFor();
  await other.getByLabel("Password").fill("new password 2");
  await other.getByRole("button", { name: "Sign in" }).click();
  await other.getByRole("heading", { name: "Account settings", level: 1 }).waitFor();
  assert(await page.getByRole("heading", { name: "Password" }).isVisible(), "this browser stayed signed in");
  await otherContext.close();
});
