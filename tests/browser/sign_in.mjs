// Point 2: sign in with the one-time link or a password, sign out, and a session that expires
// returns to sign-in without losing a typed draft.
import { scenario, screenshot, assert, LOGIN_URL, until } from "./lib.mjs";

await scenario(async ({ page, context }) => {
  // The printed one-time link signs in...
  await page.goto(LOGIN_URL);
  await page.getByRole("button", { name: "New chat" }).waitFor();
  await page.getByText("admin", { exact: true }).waitFor();
  await screenshot(page, "signed-in-by-link");
  // ...once: spent, it lands on the sign-in page saying so (not JSON).
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  await page.goto(LOGIN_URL);
  await page.getByText("already used or has expired").waitFor();
  await screenshot(page, "spent-link");
  // A disabled account's link says the account is disabled, not that the link expired.
  await page.goto(process.env.DISABLED_LINK);
  await page.getByRole("alert").filter({ hasText: "belongs to an account that is disabled" }).waitFor();
  assert(await page.getByText("already used or has expired").count() === 0, "not worded as a spent link");
  await screenshot(page, "disabled-account-link");

  // A wrong password is refused with a clear message.
  await page.getByLabel("Username").fill("ada");
  await page.getByLabel("Password").fill("difference engine");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "Wrong username or password" }).waitFor();
  // The right one signs in.
  await page.getByLabel("Password").fill("analytical engine");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "New chat" }).waitFor();
  await page.getByText("ada", { exact: true }).waitFor();

  // A draft typed when the session has ended server-side is kept through signing in again.
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("a long draft I must not lose");
  await context.clearCookies();
  // A background request (the chat list, a stream) may find the session ended first and swap
  // the page for sign-in before the key lands; either way the sign-in page must follow.
  await box.press("Enter", { timeout: 5000 }).catch(() => {});
  await page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  await page.getByText("Your session ended").waitFor();
  await screenshot(page, "session-expired");
  await page.getByLabel("Username").fill("ada");
  await page.getByLabel("Password").fill("analytical engine");
  await page.getByRole("button", { name: "Sign in" }).click();
  await until("the draft back in the composer", async () =>
    (await page.getByRole("textbox", { name: "Message" }).inputValue()) === "a long draft I must not lose");

  // Signing out ends the session on the server: a reload shows sign-in.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  await page.reload();
  await page.getByRole("heading", { name: "Sign in to Colloquy" }).waitFor();
  const me = await page.evaluate(async () => (await fetch("/auth/me")).status);
  assert(me === 401, `signed out on the server too (got ${me})`);
});
