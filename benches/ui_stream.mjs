// The browser side of `cargo bench --bench ui_stream`: opens the 300-message chat, streams the
// 2,000-token reply into it, and reports frame times and the main thread's busy time.
import { chromium } from "playwright-core";

const base = process.env.COLLOQUY_URL;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
page.setDefaultTimeout(120000);
await page.goto(`${base}${new URL(process.env.COLLOQUY_LOGIN_URL).pathname}${new URL(process.env.COLLOQUY_LOGIN_URL).search}`);
await page.getByRole("button", { name: "New chat" }).waitFor();

const loadStart = Date.now();
await page.goto(`${base}/c/${process.env.CHAT_ID}`);
await page.getByRole("article", { name: "Assistant" }).nth(149).waitFor({ state: "attached" });
const loadMs = Date.now() - loadStart;
const shown = await page.getByRole("article").count();

const cdp = await page.context().newCDPSession(page);
await cdp.send("Performance.enable");
const metric = async (name) => (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === name)?.value ?? 0;

await page.evaluate(() => {
  window.__frames = [];
  window.__long = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__long.push(entry.duration);
  }).observe({ type: "longtask" });
  let last = performance.now();
  const tick = (now) => {
    window.__frames.push(now - last);
    last = now;
    if (!window.__stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
});
const profiling = process.env.BENCH_PROFILE === "1";
if (profiling) {
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 500 });
  await cdp.send("Profiler.start");
}
const busyBefore = await metric("TaskDuration");
const started = Date.now();
const box = page.getByRole("textbox", { name: "Message" });
await box.fill("Now the long one");
await box.press("Enter");
// Waited for with a cheap check a few times a second: Playwright's role queries walk the whole
// accessibility tree of 300 messages at every poll, which would be measured as the page's own work.
const busy = (state) => page.waitForFunction(
  (want) => document.querySelector('[role="log"]')?.getAttribute("aria-busy") === want,
  state, { polling: 250, timeout: 120000 });
await busy("true");
await busy("false");
const wallMs = Date.now() - started;
const busyAfter = await metric("TaskDuration");
if (profiling) {
  const { profile } = await cdp.send("Profiler.stop");
  const selfTime = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const deltas = profile.timeDeltas;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id).callFrame;
    const key = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop()}:${frame.lineNumber}`;
    selfTime.set(key, (selfTime.get(key) ?? 0) + (deltas[i] ?? 0) / 1000);
  });
  const top = [...selfTime].sort((a, b) => b[1] - a[1]).slice(0, 25);
  console.log("self time by function (ms):");
  for (const [key, ms] of top) console.log(`  ${ms.toFixed(0).padStart(6)}  ${key}`);
}
const { frames, long } = await page.evaluate(() => {
  window.__stop = true;
  return { frames: window.__frames, long: window.__long };
});
const text = await page.getByRole("article", { name: "Assistant" }).last().innerText();
const sorted = [...frames].sort((a, b) => a - b);
const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const over50 = frames.filter((f) => f > 50).length;
const busyMs = (busyAfter - busyBefore) * 1000;

console.log(`chat loaded: ${shown} messages shown in ${loadMs} ms`);
console.log(`reply: ${process.env.REPLY_TOKENS} deltas streamed in ${(wallMs / 1000).toFixed(1)} s (${text.length} characters shown)`);
console.log(`frames: ${frames.length}, over 50 ms: ${over50}, p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, longest ${sorted.at(-1)?.toFixed(1)} ms`);
console.log(`long tasks (>50 ms): ${long.length}, ${long.reduce((a, b) => a + b, 0).toFixed(0)} ms in total`);
console.log(`main thread busy: ${busyMs.toFixed(0)} ms of ${wallMs} ms (${((100 * busyMs) / wallMs).toFixed(1)}%)`);
await browser.close();
if (!text.includes("### Part") && !text.includes("Part 1")) {
  console.error("the reply did not render");
  process.exit(1);
}
