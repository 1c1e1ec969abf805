// Finds TeX in Markdown before the Markdown parser sees it (so `_` and `\` inside math are not
// taken as emphasis or escapes) and leaves an inert placeholder in its place. Delimiters:
// $$…$$ and \[…\] (display), \(…\) and $…$ (inline). A single $ opens math only when a
// non-space follows it, and closes only after a non-space and before a non-digit, so prices
// ("$5 and $10") stay text. Code spans and fenced blocks are left alone.

/// Returns {text, maths: [{tex, display}]}; placeholders are `<span data-math="i"></span>`.
export function extractMath(source) {
  const maths = [];
  let out = "";
  let i = 0;
  const n = source.length;
  const place = (tex, display) => {
    maths.push({ tex, display });
    return `<span data-math="${maths.length - 1}"></span>`;
  };
  let lineStart = true;
  while (i < n) {
    const c = source[i];
    if (lineStart) {
      const fence = /^( {0,3})(`{3,}|~{3,})/.exec(source.slice(i, i + 200));
      if (fence) {
        const end = closingFence(source, i, fence[2]);
        out += source.slice(i, end);
        i = end;
        lineStart = true;
        continue;
      }
    }
    if (c === "`") {
      let run = 0;
      while (source[i + run] === "`") run++;
      const ticks = "`".repeat(run);
      let close = source.indexOf(ticks, i + run);
      while (close !== -1 && source[close + run] === "`") {
        let more = close;
        while (source[more] === "`") more++;
        close = source.indexOf(ticks, more);
      }
      if (close === -1) {
        out += ticks;
        i += run;
      } else {
        out += source.slice(i, close + run);
        i = close + run;
      }
      lineStart = false;
      continue;
    }
    if (c === "\\" && (source[i + 1] === "[" || source[i + 1] === "(")) {
      const display = source[i + 1] === "[";
      const closer = display ? "\\]" : "\\)";
      const close = source.indexOf(closer, i + 2);
      if (close !== -1 && close > i + 2) {
        out += place(source.slice(i + 2, close).trim(), display);
        i = close + 2;
        lineStart = false;
        continue;
      }
    }
    if (c === "\\" && source[i + 1] === "$") {
      out += "\\$";
      i += 2;
      lineStart = false;
      continue;
    }
    if (c === "$" && source[i + 1] === "$") {
      const close = source.indexOf("$$", i + 2);
      if (close !== -1 && source.slice(i + 2, close).trim() !== "") {
        out += place(source.slice(i + 2, close).trim(), true);
        i = close + 2;
        lineStart = false;
        continue;
      }
    }
    if (c === "$" && source[i + 1] !== "$") {
      const close = inlineClose(source, i);
      if (close !== -1) {
        out += place(source.slice(i + 1, close), false);
        i = close + 1;
        lineStart = false;
        continue;
      }
    }
    out += c;
    lineStart = c === "\n";
    i++;
  }
  return { text: out, maths };
}

function closingFence(source, start, fence) {
  const lineEnd = source.indexOf("\n", start);
  if (lineEnd === -1) return source.length;
  const marker = fence[0];
  let pos = lineEnd + 1;
  while (pos < source.length) {
    const next = source.indexOf("\n", pos);
    const line = source.slice(pos, next === -1 ? source.length : next);
    const trimmed = line.replace(/^ {0,3}/, "");
    if (trimmed.startsWith(marker.repeat(fence.length)) && trimmed.replace(new RegExp(`^\\${marker}+`), "").trim() === "") {
      return next === -1 ? source.length : next + 1;
    }
    if (next === -1) return source.length;
    pos = next + 1;
  }
  return source.length;
}

/// The index of the `$` closing an inline formula opened at `open`, or -1.
function inlineClose(source, open) {
  const first = source[open + 1];
  if (first === undefined || /\s/.test(first) || /\d/.test(source[open - 1] ?? "")) return -1;
  for (let j = open + 1; j < source.length; j++) {
    const c = source[j];
    if (c === "\n" && source[j + 1] === "\n") return -1;
    if (c === "\\") {
      j++;
      continue;
    }
    if (c !== "$") continue;
    if (/\s/.test(source[j - 1])) continue;
    if (/\d/.test(source[j + 1] ?? "")) continue;
    return j;
  }
  return -1;
}
