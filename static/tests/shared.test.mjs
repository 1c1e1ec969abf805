import { test } from "node:test";
import assert from "node:assert/strict";
import { EXPIRIES, lifetime } from "../src/shared/dialog.js";
import { parse } from "../src/router.js";

test("a shared link's path is the shared page, with its token", () => {
  assert.deepEqual(parse("/s/cqshr_abc-DEF_123"), { name: "shared", chatId: null, kbId: null, token: "cqshr_abc-DEF_123" });
  assert.equal(parse("/s/").name, "home");
  assert.equal(parse("/s/a/b").name, "home");
  assert.equal(parse("/settings").name, "settings");
});

test("the offered expiries are within what the server accepts (60 s to 365 days)", () => {
  assert.equal(EXPIRIES[0].seconds, null);
  for (const { seconds } of EXPIRIES.slice(1)) assert.ok(seconds >= 60 && seconds <= 365 * 24 * 3600, String(seconds));
});

test("a link's lifetime says whether and when it expires", () => {
  const now = Date.parse("2026-12-05T12:00:00Z");
  const made = "2026-12-05T11:00:00Z";
  assert.match(lifetime({ created_at: made, expires_at: null }, now), /no expiry$/);
  assert.match(lifetime({ created_at: made, expires_at: "2026-12-05T11:30:00Z" }, now), /expired$/);
  assert.match(lifetime({ created_at: made, expires_at: "2026-12-06T12:00:00Z" }, now), /expires /);
});
