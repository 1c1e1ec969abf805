// The UI's icons, drawn as inline SVG so every system shows them (an emoji or a rare symbol
// is an empty box where the font lacks it). Each is decoration: hidden from assistive
// technology, so the control it sits in needs words of its own (visible or `aria-label`).
// Strokes use `currentColor`, so an icon takes its control's colour in both themes.

const SVG = "http://www.w3.org/2000/svg";

/// Path data on a 24×24 grid, drawn as 2-unit round strokes; `dots` are filled circles.
const ICONS = {
  menu: { paths: ["M4 6h16", "M4 12h16", "M4 18h16"] },
  more: { dots: [[5, 12], [12, 12], [19, 12]] },
  settings: { paths: ["M4 7h9", "M19 7h1", "M4 17h3", "M13 17h7"], rings: [[16, 7], [10, 17]] },
  artifact: { paths: ["M6 3h8l4 4v14H6z", "M14 3v4h4", "M10.5 11.5 8.5 14l2 2.5", "M13.5 11.5l2 2.5-2 2.5"] },
  documents: { paths: ["M9 3h7l4 4v11H9z", "M16 3v4h4", "M5 7v14h11"] },
  memory: { paths: ["M7 3h10v18l-5-4-5 4z"] },
  arrowDown: { paths: ["M12 5v14", "M6 13l6 6 6-6"] },
  pencil: { paths: ["M4 20h4L19 9l-4-4L4 16z", "M13 7l4 4"] },
  close: { paths: ["M6 6l12 12", "M18 6 6 18"] },
  warning: { paths: ["M12 3 2 21h20z", "M12 10v5", "M12 18v.01"] },
  download: { paths: ["M12 4v11", "M7 10l5 5 5-5", "M5 20h14"] },
  check: { paths: ["M5 12l5 5 9-10"] },
  share: { paths: ["M12 15V3", "M7 8l5-5 5 5", "M5 13v7h14v-7"] },
  user: { paths: ["M4 21c0-4 4-6 8-6s8 2 8 6"], rings: [[12, 8]] },
  folder: { paths: ["M3 6h6l2 2h10v11H3z"] },
  folderOpen: { paths: ["M3 19V6h6l2 2h8v3", "M3 19l3-8h16l-3 8z"] },
  archive: { paths: ["M3 4h18v4H3z", "M5 8v12h14V8", "M10 12h4"] },
};

/// The names `icon` knows, for tests and callers that choose one at run time.
export const ICON_NAMES = Object.keys(ICONS);

/// An `<svg>` icon by name ("menu", "settings", …), 1.15em square, hidden from screen readers.
export function icon(name) {
  const shape = ICONS[name];
  if (!shape) throw new Error(`no icon named ${name}`);
  const svg = document.createElementNS(SVG, "svg");
  for (const [key, value] of Object.entries({
    class: `icon-svg icon-${name}`, viewBox: "0 0 24 24", width: "1.15em", height: "1.15em",
    fill: "none", stroke: "currentColor", "stroke-width": "2", "stroke-linecap": "round",
    "stroke-linejoin": "round", "aria-hidden": "true", focusable: "false",
  })) svg.setAttribute(key, value);
  for (const d of shape.paths ?? []) svg.append(part("path", { d }));
  for (const [cx, cy] of shape.rings ?? []) svg.append(part("circle", { cx, cy, r: 2.5 }));
  for (const [cx, cy] of shape.dots ?? []) svg.append(part("circle", { cx, cy, r: 1.6, fill: "currentColor", stroke: "none" }));
  return svg;
}

function part(tag, attributes) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, String(value));
  return el;
}

