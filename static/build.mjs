// Bundles the UI for the server to embed: `node static/build.mjs OUTDIR`.
// esbuild splits the app into the entry (what the first screen needs) and lazy chunks
// (highlight.js, KaTeX, mermaid), hashes every name so assets can be cached forever, writes
// index.html pointing at the hashed entry files, and precompresses text files (.br, .gz).
import { build } from "esbuild";
import { mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync, statSync } from "node:fs";
import { join, dirname, relative, extname } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error("usage: node static/build.mjs OUTDIR");
  process.exit(2);
}
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

const result = await build({
  entryPoints: {
    app: join(here, "src/main.js"),
    style: join(here, "styles/app.css"),
    katex: join(here, "styles/katex.css"),
  },
  bundle: true,
  splitting: true,
  format: "esm",
  // COLLOQUY_UI_MINIFY=0 keeps names readable, for profiling.
  minify: process.env.COLLOQUY_UI_MINIFY !== "0",
  sourcemap: false,
  target: ["es2022"],
  outdir: join(out, "assets"),
  entryNames: "[name]-[hash]",
  chunkNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  loader: { ".woff2": "file", ".woff": "file", ".ttf": "file" },
  metafile: true,
  legalComments: "linked",
  logLevel: "warning",
});

const entries = {};
for (const [file, meta] of Object.entries(result.metafile.outputs)) {
  if (!meta.entryPoint) continue;
  const url = "/" + relative(out, file).split("\\").join("/");
  if (meta.entryPoint.endsWith("main.js")) entries.js = url;
  if (meta.entryPoint.endsWith("app.css")) entries.css = url;
  if (meta.entryPoint.endsWith("katex.css")) entries.katex = url;
}
const html = readFileSync(join(here, "index.html"), "utf8")
  .replace("{{APP_JS}}", entries.js)
  .replace("{{APP_CSS}}", entries.css)
  .replace("{{KATEX_CSS}}", entries.katex);
writeFileSync(join(out, "index.html"), html);
writeFileSync(join(out, "assets", "favicon.svg"), readFileSync(join(here, "favicon.svg")));

const compressible = new Set([".js", ".css", ".html", ".svg", ".json", ".txt", ".ttf"]);
function compressAll(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      compressAll(path);
      continue;
    }
    if (!compressible.has(extname(name))) continue;
    const body = readFileSync(path);
    if (body.length < 512) continue;
    writeFileSync(path + ".gz", gzipSync(body, { level: 9 }));
    writeFileSync(
      path + ".br",
      brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
  }
}
compressAll(out);
