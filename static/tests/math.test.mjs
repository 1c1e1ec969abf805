import { test } from "node:test";
import assert from "node:assert/strict";
import { extractMath } from "../src/markdown/math.js";

const maths = (source) => extractMath(source).maths;

test("inline and display math are lifted out", () => {
  assert.deepEqual(maths("a $x^2$ b $$\\int_0^1 f$$ c \\(y_1\\) d \\[z\\]"), [
    { tex: "x^2", display: false },
    { tex: "\\int_0^1 f", display: true },
    { tex: "y_1", display: false },
    { tex: "z", display: true },
  ]);
});

test("prices are not math", () => {
  assert.deepEqual(maths("It costs $5 and $10 today."), []);
  assert.deepEqual(maths("between $5 and $10, or $20"), []);
  assert.equal(extractMath("It costs $5 and $10.").text, "It costs $5 and $10.");
});

test("code spans and fenced blocks keep their dollars", () => {
  assert.deepEqual(maths("`echo $HOME $PATH` and\n```sh\nx=$a$b\n```\n"), []);
});

test("an escaped dollar is text", () => {
  assert.deepEqual(maths("\\$x$ y"), []);
});

test("the placeholder survives Markdown untouched", () => {
  const { text } = extractMath("*a* $b_1$ _c_");
  assert.match(text, /^\*a\* <span data-math="0"><\/span> _c_$/);
});
