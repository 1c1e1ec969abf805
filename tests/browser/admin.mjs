// Issue 35, the admin page: the admin opens it from the sidebar, creates a user and hands over
// the one-time login link; that user signs in with it in a browser of their own, gets no admin
// page (and a 403 from its REST); the admin makes them an admin (they see the Admin link),
// disables "dan" (the Rust side made him, with a password: he can no longer sign in) and
// deletes the first user after typing their name. The page shows the server's version, its
// storage and the MCP server the Rust side configured. axe checks the page at desktop and
// 375 px widths.
import { scenario, signIn, screenshot, assert, axe, BASE } from "./lib.mjs";

await scenario(async ({ page, browser }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin" }).click();
  await page.getByRole("heading", { name: "Administration", level: 1 }).waitFor();
  assert(new URL(page.url()).pathname === "/admin", `the page has its URL: ${page.url()}`);
  await page.getByRole("heading", { name: "Model servers" }).waitFor();
  await page.getByRole("list", { name: "Model servers" }).getByText(/Reachable/).waitFor();
  await page.getByRole("list", { name: "MCP servers" }).getByText(/^local — connected \(stdio\), [1-9]\d* tools?/).waitFor();
  const facts = page.getByRole("region", { name: "Server" });
  const fact = async (term) => {
    const terms = await facts.getByRole("term").allInnerTexts();
    return (await facts.getByRole("definition").allInnerTexts())[terms.indexOf(term)];
  };
  assert(await fact("Version") === process.env.VERSION, `the version is shown: ${await fact("Version")}`);
  const stored = await fact("Data directory");
  assert(/^\d+(\.\d)? (bytes|KB|MB|GB)/.test(stored), `the storage used is shown: ${stored}`);
  await axe(page, "the admin page");
  await screenshot(page, "admin");

  await page.getByRole("textbox", { name: "Username" }).fill("carol");
  await page.getByRole("button", { name: "Create user" }).click();
  const field = page.getByRole("textbox", { name: "Login link for carol" });
  await field.waitFor();
  const link = await field.inputValue();
  assert(link.startsWith(BASE) && link.includes("/login?token="), `a login link: ${link}`);
  await page.getByRole("row", { name: /carol/ }).getByRole("button", { name: "Disable carol" }).waitFor();
  await axe(page, "the admin page with a new user's link");
  await screenshot(page, "created");
  await page.setViewportSize({ width: 375, height: 740 });
  await page.getByRole("button", { name: "Show chats" }).waitFor();
  await axe(page, "the admin page at 375 px");
  await screenshot(page, "narrow");
  await page.setViewportSize({ width: 1280, height: 800 });

  // Carol, in a browser of her own, signs in with the link.
  const hers = await browser.newContext({ baseURL: BASE, viewport: { width: 1280, height: 800 } });
  const carol = await hers.newPage();
  await carol.goto(link);
  await carol.getByRole("button", { name: "New chat" }).waitFor();
  const me = await carol.evaluate(async () => (await fetch("/auth/me")).json());
  assert(me.username === "carol" && me.is_admin === false, `signed in as carol: ${JSON.stringify(me)}`);
  assert(await carol.getByRole("link", { name: "Admin" }).count() === 0, "no Admin link for a non-admin");
  await carol.goto("/admin");
  await carol.getByRole("heading", { name: "Page not found", level: 1 }).waitFor();
  assert(await carol.getByRole("heading", { name: "Users" }).count() === 0, "no admin page for a non-admin");
  const refused = await carol.evaluate(async () => (await fetch("/admin/api/users")).status);
  assert(refused === 403, `the admin REST refuses a non-admin: ${refused}`);
  const spent = await (await fetch(link, { redirect: "manual" })).status;
  assert(spent === 410, `the link works once: ${spent}`);

  // Made an admin, Carol sees the Admin link.
  await page.getByRole("button", { name: "Make admin: carol" }).click();
  await page.getByRole("row", { name: /carol/ }).getByRole("cell", { name: "Admin", exact: true }).waitFor();
  await carol.reload();
  await carol.getByRole("link", { name: "Admin" }).click();
  await carol.getByRole("heading", { name: "Users" }).waitFor();

  // Disabled, Dan can no longer sign in.
  const danSignsIn = async () => (await fetch(`${BASE}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "dan", password: "dan password 1" }),
  })).status;
  assert(await danSignsIn() === 200, "dan signs in before");
  await page.getByRole("button", { name: "Disable dan" }).click();
  await page.getByRole("row", { name: /dan/ }).getByRole("cell", { name: "Disabled" }).waitFor();
  await page.getByRole("button", { name: "Enable dan" }).waitFor();
  const refusedLogin = await danSignsIn();
  assert(refusedLogin >= 400 && refusedLogin < 500, `a disabled user cannot sign in: ${refusedLogin}`);

  // The admin deletes Carol, after typing her name.
  await page.getByRole("button", { name: "Delete carol" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete carol?" });
  const confirm = dialog.getByRole("button", { name: "Delete user" });
  assert(await confirm.isDisabled(), "deleting waits for the typed name");
  await dialog.getByRole("textbox", { name: "Type carol to confirm" }).fill("caro");
  assert(await confirm.isDisabled(), "a wrong name does not delete");
  await dialog.getByRole("textbox", { name: "Type carol to confirm" }).fill("carol");
  await axe(page, "the typed confirmation");
  await confirm.click();
  await page.getByText("carol was deleted.").waitFor();
  assert(await page.getByRole("row", { name: /carol/ }).count() === 0, "carol is no longer listed");
  const gone = await carol.evaluate(async () => (await fetch("/auth/me")).status);
  assert(gone === 401, `a deleted user's session ends: ${gone}`);
  await hers.close();
});
