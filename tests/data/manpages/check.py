#!/usr/bin/env python3
"""Build queries.jsonl and qrels.tsv from judgments.txt (--build), then validate.

Validation: every line is a JSON object with the right keys, ids are unique, every
judged corpus-id exists, every query has a judgment, every evidence string occurs in
the query's first grade-2 document, and no page is the grade-2 answer of too many
questions. Prints statistics.
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
P = lambda n: os.path.join(HERE, n)


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def parse_judgments():
    out = []
    for n, line in enumerate(open(P("judgments.txt"), encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("||")]
        if len(parts) != 3:
            sys.exit(f"judgments.txt:{n}: expected 3 fields: {line}")
        text, judged, evidence = parts
        grades = []
        for tok in judged.split():
            doc, g = tok.rsplit(":", 1)
            grades.append((doc, int(g)))
        out.append((n, text, grades, evidence))
    return out


def build(judgments):
    with open(P("queries.jsonl"), "w", encoding="utf-8") as q, \
         open(P("qrels.tsv"), "w", encoding="utf-8") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        for i, (_, text, grades, _) in enumerate(judgments, 1):
            q.write(json.dumps({"_id": f"q{i}", "text": text}, ensure_ascii=False) + "\n")
            for doc, g in grades:
                r.write(f"q{i}\t{doc}\t{g}\n")


def main():
    errors = []
    judgments = parse_judgments()
    if "--build" in sys.argv:
        build(judgments)

    corpus = {}
    for n, line in enumerate(open(P("corpus.jsonl"), encoding="utf-8"), 1):
        d = json.loads(line)
        if set(d) != {"_id", "title", "text"} or not all(isinstance(v, str) for v in d.values()):
            errors.append(f"corpus line {n}: bad keys/types")
        if d["_id"] in corpus:
            errors.append(f"corpus: duplicate id {d['_id']}")
        if not d["text"].strip() or not d["title"].strip():
            errors.append(f"corpus: empty title/text {d['_id']}")
        if len(d["text"]) > 15000:
            errors.append(f"corpus: text too long {d['_id']}")
        corpus[d["_id"]] = d

    queries = {}
    for n, line in enumerate(open(P("queries.jsonl"), encoding="utf-8"), 1):
        q = json.loads(line)
        if set(q) != {"_id", "text"}:
            errors.append(f"queries line {n}: bad keys")
        if q["_id"] in queries:
            errors.append(f"queries: duplicate id {q['_id']}")
        queries[q["_id"]] = q["text"]
    texts = collections.Counter(norm(t) for t in queries.values())
    for t, c in texts.items():
        if c > 1:
            errors.append(f"queries: duplicate text {t!r}")

    lines = open(P("qrels.tsv"), encoding="utf-8").read().splitlines()
    if lines[0] != "query-id\tcorpus-id\tscore":
        errors.append("qrels: bad header")
    qrels = collections.defaultdict(dict)
    for n, line in enumerate(lines[1:], 2):
        f = line.split("\t")
        if len(f) != 3 or f[2] not in ("1", "2"):
            errors.append(f"qrels line {n}: bad row {line!r}")
            continue
        if f[0] not in queries:
            errors.append(f"qrels line {n}: unknown query {f[0]}")
        if f[1] not in corpus:
            errors.append(f"qrels line {n}: unknown doc {f[1]}")
        if f[1] in qrels[f[0]]:
            errors.append(f"qrels line {n}: duplicate pair")
        qrels[f[0]][f[1]] = int(f[2])
    for qid in queries:
        if not qrels.get(qid):
            errors.append(f"query {qid} has no judgments")
        elif 2 not in qrels[qid].values():
            errors.append(f"query {qid} has no grade-2 page")

    # evidence: the answer is in the (capped) text of the first grade-2 page
    for i, (n, text, grades, evidence) in enumerate(judgments, 1):
        first2 = next((d for d, g in grades if g == 2), None)
        if first2 in corpus and norm(evidence) not in norm(corpus[first2]["title"] + " " + corpus[first2]["text"]):
            errors.append(f"judgments.txt:{n}: evidence {evidence!r} not in {first2}")

    per_doc2 = collections.Counter(d for j in qrels.values() for d, g in j.items() if g == 2)
    grades = collections.Counter(g for j in qrels.values() for g in j.values())
    per_q = collections.Counter(len(j) for j in qrels.values())
    short = sum(1 for t in queries.values() if len(t.split()) <= 5)
    print(f"documents: {len(corpus)}")
    print(f"queries: {len(queries)}  (short, <=5 words: {short})")
    print(f"judgments: {sum(len(j) for j in qrels.values())}  grade 2: {grades[2]}  grade 1: {grades[1]}")
    print("judged pages per query: " + ", ".join(f"{k}: {per_q[k]}" for k in sorted(per_q)))
    print(f"distinct pages judged: {len({d for j in qrels.values() for d in j})}, as grade 2: {len(per_doc2)}")
    print("most grade-2 answers per page: " + ", ".join(f"{d} {c}" for d, c in per_doc2.most_common(8)))
    for name in ("corpus.jsonl", "queries.jsonl", "qrels.tsv"):
        print(f"{name}: {os.path.getsize(P(name))} bytes")
    for d, c in per_doc2.items():
        if c > 4:
            errors.append(f"{d} is the grade-2 answer of {c} questions")
    for e in errors:
        print("ERROR:", e)
    print("OK" if not errors else f"{len(errors)} errors")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
