#!/usr/bin/env python3
"""presk report end to end: a solve of examples/mlp.psk (with --report), a hand-written curve,
and the pages parsed with Python's html.parser. Checks: the SVG sections are there; every value
of the realization has exactly one type-map cell and one row on the value scales, carrying its
type, bytes, sensitivity and term as the solve's JSON has them; the summary's numbers are the
JSON's; nothing refers outside the file (no http(s) src/href, no script, no link, no url());
solve --report writes the same bytes as presk report; the same inputs give the same bytes; bad
input gets its coded error and writes nothing.

usage: check_report.py PRESK_BINARY REPOSITORY_ROOT
"""
import html.parser
import json
import os
import subprocess
import sys
import tempfile

PRESK, ROOT = sys.argv[1], sys.argv[2]
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)


def presk(*args, status=0):
    result = subprocess.run([PRESK, *args], cwd=ROOT, capture_output=True, text=True)
    if status is not None and result.returncode != status:
        sys.exit(f"presk {' '.join(args)}: exit {result.returncode}, wanted {status}\n{result.stdout}{result.stderr}")
    return result


class Page(html.parser.HTMLParser):
    """Every start tag with its attributes, and the text, of one page."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def with_class(self, name):
        return [a for _, a in self.tags if name in (a.get("class") or "").split()]


def number(value):
    return float(value) if isinstance(value, str) else float(value)


def check_page(path, record, curve):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    page = Page(text)
    svgs = [a.get("class") for t, a in page.tags if t == "svg"]
    for name in ("budget", "type-map", "value-scales") + (("curve",) if curve else ()):
        check(name in svgs, f"{path}: no <svg class={name}> (found {svgs})")
    check(any(t in ("rect", "circle") for t, _ in page.tags), f"{path}: no SVG shapes")
    # Nothing outside the file.
    for tag, attrs in page.tags:
        check(tag not in ("script", "link", "iframe", "img", "object", "embed"), f"{path}: a <{tag}> element")
        for key in ("src", "href", "xlink:href", "action"):
            value = (attrs.get(key) or "").strip().lower()
            check(not value or value.startswith("#"), f"{path}: <{tag} {key}={value!r}> refers outside the page")
    check("url(" not in text and "@import" not in text and "http://" not in text and "https://" not in text,
          f"{path}: a url(), @import or http(s) address in the page")
    # Every value once in the type map and once on the value scales, with the JSON's numbers.
    cells = page.with_class("cell")
    rows = page.with_class("value-row")
    check(len(cells) == len(record["values"]), f"{path}: {len(cells)} cells for {len(record['values'])} values")
    check(len(rows) == len(record["values"]), f"{path}: {len(rows)} value rows for {len(record['values'])} values")
    for value in record["values"]:
        key = value["key"]
        mine = [c for c in cells if c.get("data-key") == key]
        check(len(mine) == 1, f"{path}: value {key} has {len(mine)} cells")
        if mine:
            check(mine[0]["data-final"] == value["final"], f"{path}: {key}'s cell says {mine[0]['data-final']}")
            check(mine[0]["data-kind"] == value["kind"], f"{path}: {key}'s kind")
            check(float(mine[0]["data-bytes"]) == number(value["bytes"]), f"{path}: {key}'s bytes")
        row = [r for r in rows if r.get("data-key") == key]
        check(len(row) == 1, f"{path}: value {key} has {len(row)} rows")
        if row:
            s = value["sensitivity"]
            check(row[0]["data-sensitivity"] == "unknown" if s is None else float(row[0]["data-sensitivity"]) == number(s),
                  f"{path}: {key}'s sensitivity {row[0]['data-sensitivity']} against {s}")
            check(float(row[0]["data-term"]) == number(value["term"]), f"{path}: {key}'s term")
    # The summary's numbers are the JSON's.
    fields = {a["data-field"]: a["data-value"] for _, a in page.tags if "data-field" in a}
    held = record["gap"]["held_out"]
    expected = {"budget": record["budget"]["absolute"], "target": record["target"], "estimate": record["estimate"],
                "gap_in_sample": record["gap"]["in_sample"]["absolute"],
                "traffic_ratio": record["traffic"]["ratio"], "traffic_all_f64": record["traffic"]["all_f64"],
                "traffic_realization": record["traffic"]["realization"], "rounds": record["rounds"],
                "measurements": record["measurements"]}
    for field, want in expected.items():
        check(field in fields and float(fields[field]) == number(want), f"{path}: {field} = {fields.get(field)}, JSON {want}")
    check(fields.get("gap_held_out") == "none" if held is None else float(fields["gap_held_out"]) == number(held["absolute"]),
          f"{path}: gap_held_out = {fields.get('gap_held_out')}")
    # explain's moves: one table row per move of the record (the second table of the moves section).
    body = "".join(page.text)
    for move in record["moves"]:
        check(move["kind"] in body, f"{path}: move kind {move['kind']} not in the page")
    if curve:
        for point in curve["points"]:
            check(point["label"] in body, f"{path}: the curve's point {point['label']} is not in the page")
    return text


CURVE = {"format": 1, "kind": "presk curve", "title": "a hand-written test curve",
         "yardstick": {"seeds": [0, 1, 2], "quality": [2.5, 2.52, 2.47]},
         "points": [
             {"on": "loss", "label": "1e-1", "budget": 0.1, "absolute": 0.25, "traffic_ratio": 3.1,
              "gap_in_sample": 2e-4, "gap_held_out": 3e-4, "inside": True, "quality": 2.5001},
             {"on": "loss", "label": "1e-3", "budget": 1e-3, "absolute": 2.5e-3, "traffic_ratio": 2.0,
              "gap_in_sample": 2e-6, "gap_held_out": None, "inside": True, "quality": None},
             {"on": "logits", "label": "ε*(1e-3)", "budget": 4e-4, "absolute": 4e-4, "traffic_ratio": 1.9,
              "gap_in_sample": 7e-5, "gap_held_out": 8e-5, "inside": True, "quality": 2.4999,
              "flipped": 0, "allowed": 99}]}


def expect_error(args, code, out):
    result = presk(*args, status=None)
    check(result.returncode == 1 and code in result.stderr + result.stdout,
          f"presk {' '.join(args)}: wanted {code} and exit 1, got {result.returncode}:\n{result.stderr}")
    check(not os.path.exists(out), f"presk {' '.join(args)}: wrote {out} on bad input")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        file = lambda name: os.path.join(tmp, name)
        presk("calibrate", "--precision", "examples/mlp.psk", "--entry", "loss", "--dim", "B=4", "--samples", "2",
              "--bits", "128", "--quiet", "--out", file("envelope.json"))
        solved = presk("solve", "examples/mlp.psk", "--precision", file("envelope.json"), "--budget", "1e-3",
                       "--quiet", "--json", "--out", file("R.json"), "--report", file("solve.html"))
        record = json.loads(solved.stdout)
        with open(file("R.json")) as f:
            check(json.load(f)["solve"]["values"] == record["values"], "R.json's values differ from solve --json's")
        with open(file("curve.json"), "w") as f:
            json.dump(CURVE, f)
        check_page(file("solve.html"), record, None)
        presk("report", file("R.json"), "--out", file("plain.html"))
        with open(file("solve.html"), "rb") as a, open(file("plain.html"), "rb") as b:
            check(a.read() == b.read(), "solve --report and presk report wrote different pages")
        presk("report", file("R.json"), "--curve", file("curve.json"), "--out", file("curve.html"))
        first = check_page(file("curve.html"), record, CURVE)
        presk("report", file("R.json"), "--curve", file("curve.json"), "--out", file("curve.html"))
        with open(file("curve.html"), encoding="utf-8") as f:
            check(f.read() == first, "the same inputs gave another page")
        bad_inputs(file, record)
    if FAILURES:
        print("\n".join(FAILURES))
        sys.exit(1)
    print("report: every check passed")


def bad_inputs(file, record):
    never = file("never.html")
    with open(file("not-json.json"), "w") as f:
        f.write("{ not json")
    with open(file("R.json")) as f:
        realization = json.load(f)
    del realization["solve"]["traffic"]
    with open(file("no-traffic.json"), "w") as f:
        json.dump(realization, f)
    bad_curves = {"wrong-kind": dict(CURVE, kind="something else"), "no-points": dict(CURVE, points=[]),
                  "zero-budget": dict(CURVE, points=[dict(CURVE["points"][0], budget=0)]),
                  "string-gap": dict(CURVE, points=[dict(CURVE["points"][0], gap_in_sample="small")]),
                  "bad-on": dict(CURVE, points=[dict(CURVE["points"][0], on="weights")])}
    for name, curve in bad_curves.items():
        with open(file(name + ".json"), "w") as f:
            json.dump(curve, f)
        expect_error(["report", file("R.json"), "--curve", file(name + ".json"), "--out", never], "E1173", never)
    expect_error(["report", file("envelope.json"), "--out", never], "E1170", never)
    expect_error(["report", file("missing.json"), "--out", never], "E1171", never)
    expect_error(["report", file("not-json.json"), "--out", never], "E1171", never)
    expect_error(["report", file("R.json"), "--curve", file("not-json.json"), "--out", never], "E1172", never)
    expect_error(["report", file("no-traffic.json"), "--out", never], "E1174", never)
    expect_error(["report", file("R.json"), "--out", file("R.json")], "E0140", never)
    expect_error(["solve", "examples/mlp.psk", "--precision", file("envelope.json"), "--budget", "1e-3", "--quiet",
                  "--out", file("again.json"), "--report", file("envelope.json")], "E0140", never)
    check(not os.path.exists(file("again.json")), "solve --report onto an input still wrote the realization")


if __name__ == "__main__":
    main()
