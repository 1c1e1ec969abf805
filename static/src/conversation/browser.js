// A browser tool call's page (issue 34): the URL the session was at after the call, and the
// screenshot it took as a thumbnail that opens the full image. Read from a live
// `tool_result`'s `result`, or from a stored call's `content` (the JSON the model was given).
// The answer shows its calls' latest page above their folded list (`headlinePage`): the page is
// the point of a browser call, so it is seen without unfolding.

/// The tools whose results name a page.
const BROWSER_TOOLS = new Set(["browser_action", "analyze_page"]);

/// `{url, screenshotUrl}` from a browser tool's result (an object or its JSON text); null for
/// other tools and for results that name no page (errors).
export function browserPage(name, result) {
  if (!BROWSER_TOOLS.has(name) || result == null) return null;
  let value = result;
  if (typeof result === "string") {
    try {
      value = JSON.parse(result);
    } catch {
      return null;
    }
  }
  if (typeof value !== "object" || typeof value.url !== "string" || !value.url) return null;
  const shot = value.screenshot?.url;
  // Only the chat API's own screenshot URLs are shown: a result is the model's to shape.
  const screenshotUrl = typeof shot === "string" && /^\/chat\/api\/[^/]+\/screenshots\/shot_[0-9a-f]+$/.test(shot) ? shot : null;
  return { url: value.url, screenshotUrl };
}

/// The page's URL, and its screenshot as a thumbnail linking to the full image.
export function browserCard(page, h) {
  if (!page) return null;
  return h("div", { class: "tool-page" },
    h("p", { class: "tool-page-url" }, "Page: ", h("a", { href: page.url, target: "_blank", rel: "noopener noreferrer" }, page.url)),
    page.screenshotUrl
      ? h("a", { href: page.screenshotUrl, target: "_blank", rel: "noopener", class: "tool-screenshot", "aria-label": `Open the full screenshot of ${page.url}` },
          h("img", { src: page.screenshotUrl, alt: `Screenshot of ${page.url}`, loading: "lazy" }))
      : null);
}

/// The page an answer's tool calls headline: the last one that took a screenshot, else the
/// last page any browser call was at; null when no call names a page.
export function headlinePage(tools) {
  const pages = (tools ?? []).map((t) => t.page).filter(Boolean);
  return pages.findLast((page) => page.screenshotUrl) ?? pages.at(-1) ?? null;
}
