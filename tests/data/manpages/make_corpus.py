#!/usr/bin/env python3
"""Regenerate corpus.jsonl from the man pages installed on this machine.

Reads pages.txt ("SECTION NAME" per line, '#' comments), renders each page with
`man` (no hyphenation, no justification, 100 columns), strips overstrikes with
`col -bx`, drops the header/footer lines, collapses blank lines, and caps the text
at MAX_CHARS at a line boundary. Pages that are missing or that resolve to an
already-included file (aliases such as gunzip -> gzip) are skipped; the skipped
names are printed to stderr.

Usage: python3 make_corpus.py > corpus.jsonl   (run from this directory)
"""
import hashlib
import json
import os
import re
import subprocess
import sys

MAX_CHARS = 15000
HERE = os.path.dirname(os.path.abspath(__file__))


def render(section, name):
    env = dict(os.environ, MANWIDTH="100", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    out = subprocess.run(
        ["man", "--nh", "--nj", "-P", "cat", section, name],
        capture_output=True, env=env, check=False).stdout
    if not out:
        return None
    out = subprocess.run(["col", "-bx"], input=out, capture_output=True,
                         env=env, check=True).stdout
    return out.decode("utf-8", "replace")


def clean(raw):
    lines = [l.rstrip() for l in raw.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    # header "SORT(1)   User Commands   SORT(1)" and footer "GNU coreutils 9.1  ...  SORT(1)"
    if lines and re.search(r"\(\d\w*\)\s*$", lines[0]):
        lines.pop(0)
    if lines and re.search(r"\(\d\w*\)\s*$", lines[-1]):
        lines.pop()
    text, blank = [], False
    for l in lines:
        if not l:
            if not blank and text:
                text.append("")
            blank = True
        else:
            text.append(l)
            blank = False
    while text and not text[-1]:
        text.pop()
    return text


def title_of(lines):
    """The NAME section's content, joined into one line."""
    out, inside = [], False
    for l in lines:
        if not inside:
            if l.strip() == "NAME":
                inside = True
            continue
        if not l or not l[0].isspace():
            if out:
                break
            continue
        out.append(l.strip())
    return re.sub(r"\s+", " ", " ".join(out)).strip()


def cap(lines):
    out, size = [], 0
    for l in lines:
        if size + len(l) + 1 > MAX_CHARS:
            break
        out.append(l)
        size += len(l) + 1
    return "\n".join(out)


def main():
    seen_paths, seen_hash, seen_ids = set(), set(), set()
    for raw in open(os.path.join(HERE, "pages.txt"), encoding="utf-8"):
        raw = raw.split("#", 1)[0].strip()
        if not raw:
            continue
        section, name = raw.split()
        doc_id = f"{name}.{section}"
        if doc_id in seen_ids:
            continue
        p = subprocess.run(["man", "-w", section, name], capture_output=True,
                           text=True).stdout.strip()
        if not p:
            print(f"missing: {doc_id}", file=sys.stderr)
            continue
        real = os.path.realpath(p.splitlines()[0])
        if real in seen_paths:
            print(f"alias skipped: {doc_id} -> {real}", file=sys.stderr)
            continue
        rendered = render(section, name)
        if not rendered:
            print(f"empty: {doc_id}", file=sys.stderr)
            continue
        lines = clean(rendered)
        h = hashlib.sha1("\n".join(lines).encode()).hexdigest()
        if h in seen_hash:
            print(f"duplicate content skipped: {doc_id}", file=sys.stderr)
            continue
        seen_paths.add(real)
        seen_hash.add(h)
        seen_ids.add(doc_id)
        title = title_of(lines) or name
        print(json.dumps({"_id": doc_id, "title": title, "text": cap(lines)},
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
