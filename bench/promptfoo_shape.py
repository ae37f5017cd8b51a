#!/usr/bin/env python3
"""promptfoo's side of bench/promptfoo-shape.sh: the same generated suite
(bench/assertion_shapes.py) as a promptfoo config, and the verdicts of both
tools counted the same way.

    promptfoo_shape.py config DIR        # DIR/promptfooconfig.json from DIR/suite.fixture.json + canned.json
    promptfoo_shape.py ours RUN_DIR      # pass counts per assertion type of a cautilus run
    promptfoo_shape.py theirs OUT.json   # the same of a promptfoo output file

The echo provider answers each case with its prompt, which is the case's
canned answer (the `answer` variable), so both tools score the same texts.
cautilus's `levenshtein` with `max_distance: k` is promptfoo's with
`threshold: k` (both: distance <= k passes). Shapes whose regexes carry
flags, or whose texts promptfoo would read as templates (`{{`, `{%`), are
refused: promptfoo's `regex` takes no flags.
"""
import collections
import json
import sys

KINDS = ("equals", "contains", "regex", "levenshtein", "is-json")


def config(work):
    suite = json.load(open(f"{work}/suite.fixture.json"))
    canned = json.load(open(f"{work}/canned.json"))
    tests = []
    for case in suite["cases"]:
        answer = canned[case["caseId"]]
        asserts = []
        for a in case["assertions"]:
            if a.get("flags"):
                sys.exit(f"{case['caseId']}: regex flags have no promptfoo equivalent")
            if a["type"] == "levenshtein":
                if "max_distance" not in a:
                    sys.exit(f"{case['caseId']}: a levenshtein threshold has no promptfoo equivalent")
                asserts.append({"type": "levenshtein", "value": a["value"], "threshold": a["max_distance"]})
            elif a["type"] == "is-json":
                asserts.append({"type": "is-json"})
            else:
                asserts.append({"type": a["type"], "value": a["value"]})
        for text in [answer] + [str(a.get("value", "")) for a in asserts]:
            if "{{" in text or "{%" in text or "{#" in text:
                sys.exit(f"{case['caseId']}: a value promptfoo would render as a template")
        tests.append({"description": case["caseId"], "vars": {"answer": answer}, "assert": asserts})
    json.dump({"description": suite["suiteId"], "prompts": ["{{answer}}"], "providers": ["echo"],
               "tests": tests}, open(f"{work}/promptfooconfig.json", "w"))


def show(counts, cases):
    passed = sum(1 for ok in cases.values() if ok)
    parts = " ".join(f"{k} {counts[k]}" for k in KINDS)
    print(f"cases {len(cases)}, passed {passed}; assertions passed: {parts}")


def ours(run_dir):
    summary = json.load(open(f"{run_dir}/eval-summary.json"))
    counts, cases = collections.Counter(), {}
    for e in summary["evaluations"]:
        for a in e["assertions"]:
            counts[a["name"].split(":")[0].split(" ")[0]] += a["passed"]
        cases[e["caseId"]] = all(a["passed"] for a in e["assertions"])
    show(counts, cases)


def theirs(out):
    results = json.load(open(out))["results"]["results"]
    counts, cases = collections.Counter(), {}
    for r in results:
        components = (r.get("gradingResult") or {}).get("componentResults") or []
        for c in components:
            counts[c["assertion"]["type"]] += bool(c["pass"])
        cases[r["testCase"]["description"]] = bool(r["success"])
    show(counts, cases)


if __name__ == "__main__":
    {"config": config, "ours": ours, "theirs": theirs}[sys.argv[1]](sys.argv[2])
