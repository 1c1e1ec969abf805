// Where a streaming answer's settled part ends, so only the tail after it is re-rendered.

/// Where the finished part of a streaming answer ends: after the last blank line that is not
/// inside a fenced code block or a $$ block. Text before it will not change how it renders.
export function stableLength(text) {
  let stable = 0;
  let fence = null;
  let displayMath = false;
  let pos = 0;
  while (pos < text.length) {
    const next = text.indexOf("\n", pos);
    if (next === -1) break;
    const line = text.slice(pos, next);
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    } else if (marker) {
      fence = marker;
    } else if ((line.match(/\$\$/g) ?? []).length % 2 === 1) {
      displayMath = !displayMath;
    } else if (line.trim() === "" && !displayMath) {
      stable = next + 1;
    }
    pos = next + 1;
  }
  return stable;
}
