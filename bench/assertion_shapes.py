#!/usr/bin/env python3
"""Per-case assertion workloads of many shapes, and a plain reference that
checks every verdict cautilus gives on them (bench/eval-assertion-shapes.sh).

    assertion_shapes.py gen SHAPE N SEED DIR   # DIR/suite.fixture.json, DIR/canned.json, DIR/expected.json
    assertion_shapes.py check DIR RUN_DIR      # compares RUN_DIR/eval-summary.json with DIR/expected.json
    assertion_shapes.py shapes                 # the shape names

Every case has its own five assertions with its own values: equals,
contains, regex, levenshtein and a required is-json, answered by the
fixture backend (canned results). The shapes differ in what those values
look like (see SHAPES). The reference verdicts are computed here with
Python's `re`, `json` and a textbook edit distance, on patterns and texts
chosen so that Python and Rust's `regex` read them alike (ASCII classes
where `\\w` would differ, no look-around, no back-references).
"""
import json
import random
import re
import sys

WORDS = ("plugin sandbox fixture preset scorer provider judge record summary case "
         "refund receipt order parcel invoice account support answer model agent").split()
UNICODE_WORDS = ("café naïve Zürich façade crème brûlée São Paulo Ærøskøbing "
                 "東京 数据 검색 Привет мир ελληνικά 🙂 👍🏽").split()

# Patterns several cases share (a suite's house style), each with a flag set.
SHARED = [
    (r"\b(order|invoice) #?[0-9]{3,6}\b", ""),
    (r"^[A-Z][a-z]+:", ""),
    (r"(refund|receipt)s?\s+(is|are)\s+\w+", ""),
    (r"[0-9]{1,3}(,[0-9]{3})*\.[0-9]{2}", ""),
    (r"support@[a-z]+\.(com|org)", ""),
    (r"^\s*\{.*\}\s*$", "s"),
    (r"(?:plugin|preset|scorer)[- ]?(id|name)?", "i"),
    (r"\d{4}-\d{2}-\d{2}", ""),
    (r"zz[0-9]{3}qq", ""),  # never matches
    (r"(agent|model){2,}", ""),
]


def sentence(rng, k, words=WORDS):
    return " ".join(rng.choice(words) for _ in range(k))


def one_off(rng, text):
    """`text` with one character changed (the usual near-miss `equals`)."""
    if not text:
        return "x"
    i = rng.randrange(len(text))
    c = "x" if text[i] != "x" else "y"
    return text[:i] + c + text[i + 1:]


def edits(rng, text, k):
    """`text` after `k` random edits (substitute, insert, delete)."""
    chars = list(text)
    for _ in range(k):
        op = rng.randrange(3)
        i = rng.randrange(len(chars) + (op == 1)) if chars else 0
        if op == 0 and chars:
            chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
        elif op == 1 or not chars:
            chars.insert(i, rng.choice("abcdefghijklmnopqrstuvwxyz"))
        else:
            del chars[i]
    return "".join(chars)


def unique_pattern(rng, text):
    """A real regular expression built from a word of the answer (matching
    it), or one that cannot match it."""
    words = re.findall(r"[A-Za-z]{3,}", text)
    if not words or rng.random() < 0.25:
        return r"[QXZ]{2}\d{2,4}(?:-[a-f]{3})?", ""
    w = rng.choice(words)
    return rng.choice([
        rf"\b{w[:2]}[a-z]*\s+[a-z]{{2,12}}",
        rf"{w}(\s+\S+){{0,3}}",
        rf"(?:{w}|nothing-like-it)[^\n]{{0,20}}$",
        rf"[{w[0].lower()}{w[0].upper()}]{re.escape(w[1:])}",
    ]), ""


def answer_for(shape, rng, i):
    if shape == "json":
        if rng.random() < 0.2:
            return json.dumps({"id": i, "answer": sentence(rng, 8), "tags": rng.sample(WORDS, 3)})
        return "Answer: " + sentence(rng, 20)
    if shape == "unicode":
        return "Réponse " + sentence(rng, 14, UNICODE_WORDS + WORDS[:6])
    if shape == "long":
        return "Report: " + " ".join(sentence(rng, 30) + f" order #{rng.randrange(1000, 99999)}."
                                     for _ in range(rng.randrange(25, 50)))
    if shape == "icase":
        return "Answer: " + " ".join(w.upper() if rng.random() < 0.4 else w.capitalize()
                                     for w in sentence(rng, 24).split())
    text = f"Item {i}: " + sentence(rng, 26) + f" order #{rng.randrange(100, 999999)}"
    return text[:200] if shape in ("literal", "regex", "near", "far") else text


def case_assertions(shape, rng, text):
    """The five assertions of one case, with its own values."""
    equals = text if rng.random() < 0.2 else one_off(rng, text)
    start = rng.randrange(max(1, len(text) - 20))
    contains = text[start:start + rng.randrange(5, 20)] if rng.random() < 0.6 else "not in the answer"
    flags = ""
    if shape == "literal":
        pattern = "^" + re.escape(text[:12])
    elif shape == "icase":
        pattern, flags = rng.choice(SHARED[:8])[0] if rng.random() < 0.5 else re.escape(text[8:20].lower()), "i"
    elif shape == "unicode":
        words = text.split()
        w = rng.choice(words)
        pattern = rng.choice([re.escape(w), re.escape(w) + r"\s+\S+", "[àâçéèêëîïôûùüÿñæœ]+", "[^\\x00-\\x7f]{2,}", "東京|数据"])
    elif shape in ("regex", "mixed", "long", "json"):
        pattern, flags = rng.choice(SHARED) if rng.random() < 0.5 else unique_pattern(rng, text)
    else:
        pattern = re.escape(text[:10])
    if shape == "near":
        lev = {"type": "levenshtein", "value": edits(rng, text, rng.randrange(0, 6)), "max_distance": 3}
    elif shape == "far":
        lev = {"type": "levenshtein", "value": sentence(rng, 30)[:200], "threshold": 0.8}
    elif shape == "unicode":
        lev = {"type": "levenshtein", "value": edits(rng, text, rng.randrange(0, 4)), "max_distance": 2}
    else:
        lev = {"type": "levenshtein", "value": edits(rng, text[:200], rng.randrange(0, 8)), "max_distance": 4}
    regex = {"type": "regex", "value": pattern}
    if flags:
        regex["flags"] = flags
    return [
        {"type": "equals", "value": equals},
        {"type": "contains", "value": contains},
        regex,
        lev,
        {"type": "is-json"},
    ]


SHAPES = {
    "literal": "escaped literal prefixes (the older bench's shape)",
    "regex": "real regexes: classes, counted repetition, alternation; half shared across cases, some never matching",
    "icase": "case-insensitive regexes over mixed-case answers",
    "unicode": "non-ASCII answers, patterns and edit distances",
    "near": "~200-character near-miss levenshtein with max_distance 3",
    "far": "~200-character unrelated strings, levenshtein threshold 0.8",
    "json": "required is-json, 80 % of answers not JSON",
    "long": "4-10 KB answers",
    "mixed": "a bit of everything, most equals failing by one character",
}


def gen(shape, n, seed, out):
    rng = random.Random(f"{shape}-{seed}")
    cases, canned, expected = [], {}, {}
    for i in range(n):
        s = shape if shape != "mixed" else rng.choice(["regex", "icase", "unicode", "near", "far", "json"])
        text = answer_for(s, rng, i)
        case_id = f"case-{i:05d}"
        assertions = case_assertions(s, rng, text)
        cases.append({"caseId": case_id, "input": f"question {i}", "assertions": assertions})
        canned[case_id] = text
        expected[case_id] = [reference(a, text) for a in assertions]
    suite = {"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
             "suiteId": f"shape-{shape}", "provider": "anthropic", "model": "claude-sonnet-4-6",
             "cases": cases}
    json.dump(suite, open(f"{out}/suite.fixture.json", "w"))
    json.dump(canned, open(f"{out}/canned.json", "w"))
    json.dump(expected, open(f"{out}/expected.json", "w"))


LEVENSHTEIN_C = r"""
#include <stdint.h>
#include <stdlib.h>
/* Textbook two-row Levenshtein distance over code points. */
long distance(const uint32_t *a, long n, const uint32_t *b, long m) {
    long *row = malloc(sizeof(long) * (m + 1));
    for (long j = 0; j <= m; j++) row[j] = j;
    for (long i = 1; i <= n; i++) {
        long diagonal = row[0];
        row[0] = i;
        for (long j = 1; j <= m; j++) {
            long above = row[j];
            long best = above + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            if (diagonal + (a[i - 1] != b[j - 1]) < best) best = diagonal + (a[i - 1] != b[j - 1]);
            row[j] = best;
            diagonal = above;
        }
    }
    long d = row[m];
    free(row);
    return d;
}
"""


def compiled_distance():
    """The textbook programme in C (the pure-Python one takes minutes on
    5,000 long pairs), through ctypes; None without a C compiler."""
    import ctypes, os, subprocess, tempfile
    work = tempfile.mkdtemp()
    src, lib = os.path.join(work, "lev.c"), os.path.join(work, "lev.so")
    open(src, "w").write(LEVENSHTEIN_C)
    if subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, src]).returncode != 0:
        return None
    c = ctypes.CDLL(lib)
    c.distance.restype = ctypes.c_long
    c.distance.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_char_p, ctypes.c_long]

    def distance(a, b):
        return c.distance(a.encode("utf-32-le"), len(a), b.encode("utf-32-le"), len(b))
    return distance


def distance(a, b):
    """Textbook Levenshtein distance over code points."""
    global _compiled
    if _compiled is None:
        _compiled = compiled_distance() or False
    if _compiled:
        return _compiled(a, b)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


_compiled = None


def reference(assertion, text):
    """(passed, score or None) as a plain implementation decides it."""
    kind = assertion["type"]
    if kind == "equals":
        return [text.strip() == assertion["value"].strip(), None]
    if kind == "contains":
        return [assertion["value"] in text, None]
    if kind == "regex":
        flags = re.I if "i" in assertion.get("flags", "") else 0
        flags |= re.S if "s" in assertion.get("flags", "") else 0
        return [re.search(assertion["value"], text, flags) is not None, None]
    if kind == "levenshtein":
        want = assertion["value"]
        d = distance(text, want)
        longest = max(len(text), len(want))
        similarity = 1.0 if longest == 0 else 1.0 - d / longest
        if "max_distance" in assertion:
            return [d <= assertion["max_distance"], similarity]
        return [similarity >= assertion["threshold"], similarity]
    if kind == "is-json":
        try:
            json.loads(text.strip())
            return [True, None]
        except ValueError:
            return [False, None]
    raise ValueError(kind)


def check(workload, run_dir):
    expected = json.load(open(f"{workload}/expected.json"))
    summary = json.load(open(f"{run_dir}/eval-summary.json"))
    wrong, seen = [], 0
    for e in summary["evaluations"]:
        want = expected[e["caseId"]]
        for j, (got, (passed, score)) in enumerate(zip(e["assertions"], want)):
            seen += 1
            if got["passed"] != passed or (score is not None and abs(got["score"] - score) > 1e-9):
                wrong.append(f'{e["caseId"]} assertion {j} ({got["name"]}): cautilus {got["passed"]}/{got.get("score")}, reference {passed}/{score}: {got.get("detail", "")[:160]}')
    if seen != sum(len(v) for v in expected.values()):
        wrong.append(f"{seen} verdicts in the run, {sum(len(v) for v in expected.values())} expected")
    for line in wrong[:10]:
        print("WRONG", line)
    passed = sum(p for v in expected.values() for p, _ in v)
    print(f"verdicts: {seen} checked, {len(wrong)} differ from the reference ({passed} pass)")
    return not wrong


if __name__ == "__main__":
    if sys.argv[1] == "shapes":
        print(" ".join(SHAPES))
    elif sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif sys.argv[1] == "check":
        sys.exit(0 if check(sys.argv[2], sys.argv[3]) else 1)
