// A tiny element builder: h("button", {class: "x", onclick}, "Label"). Properties that are
// DOM properties (value, checked, disabled) are set as such; everything else is an attribute.
// Strings are always text nodes, never parsed as HTML.

export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key === "text") el.textContent = value;
      else if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2).toLowerCase(), value);
      } else if (key === "dataset") Object.assign(el.dataset, value);
      else if (["value", "checked", "disabled", "hidden", "selected"].includes(key)) {
        el[key] = value;
      } else el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/// A short, human "time ago" or date for a timestamp.
export function when(iso) {
  const date = new Date(iso);
  const seconds = (Date.now() - date.getTime()) / 1000;
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return date.toLocaleDateString();
}

/// Runs `fn` at most once every `ms`, always with the latest call's effect delivered.
export function throttle(fn, ms) {
  let timer = null;
  let last = 0;
  return function schedule() {
    if (timer) return;
    const wait = Math.max(0, ms - (performance.now() - last));
    timer = setTimeout(() => {
      requestAnimationFrame(() => {
        timer = null;
        last = performance.now();
        fn();
      });
    }, wait);
  };
}
