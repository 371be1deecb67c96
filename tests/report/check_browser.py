#!/usr/bin/env python3
"""presk report's page in a real browser: Debian's headless chromium loads the page offline.

A copy of the page with a measuring script appended (the page itself has no script) is loaded
with --dump-dom; the script writes what the browser laid out into the DOM, which this test
reads back: every SVG, type-map cell, value row and table has a non-zero size, nothing extends
past the page's width, every cell links to a line of the program text that exists, and the
browser fetched no resource at all (the Resource Timing list is empty; the network is off).
A screenshot of the page itself must show the colours of the types the solve chose.
The same checks run on a page whose type-map SVG was emptied, and must fail there.

usage: check_browser.py PRESK_BINARY REPOSITORY_ROOT
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

PRESK, ROOT = sys.argv[1], sys.argv[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

MEASURE = r"""
<script>
(function () {
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const out = {
    page_width: document.documentElement.clientWidth,
    scroll_width: document.documentElement.scrollWidth,
    svgs: [...document.querySelectorAll('svg')].map((s) => ({cls: s.getAttribute('class'), box: box(s),
                                                            content: s.getBBox ? [s.getBBox().width, s.getBBox().height] : [0, 0]})),
    cells: [...document.querySelectorAll('svg.type-map g.cell')].map((g) => ({key: g.dataset.key, box: box(g),
      link: g.parentElement.tagName.toLowerCase() === 'a' ? g.parentElement.getAttribute('href') : null})),
    rows: [...document.querySelectorAll('svg.value-scales g.value-row')].map((g) => ({key: g.dataset.key, box: box(g)})),
    tables: [...document.querySelectorAll('table')].map((t) => ({cls: t.getAttribute('class'), box: box(t), rows: t.rows.length})),
    lines: [...document.querySelectorAll('pre.program .line')].map((l) => l.id),
    resources: performance.getEntriesByType('resource').map((r) => r.name),
  };
  const pre = document.createElement('pre');
  pre.id = 'presk-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def chromium(tmp, *args):
    """chromium headless, offline (every host unresolvable), its own profile in tmp."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
               "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
               f"--user-data-dir={os.path.join(tmp, 'profile')}", "--window-size=1280,2000", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"chromium {' '.join(args)}: exit {result.returncode}\n{result.stderr[-2000:]}")
    return result.stdout


def layout(tmp, page_path):
    """What chromium laid out for the page (the measuring script's JSON)."""
    with open(page_path, encoding="utf-8") as f:
        page = f.read()
    measured = os.path.join(tmp, "measured.html")
    with open(measured, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", MEASURE + "</body>"))
    dom = chromium(tmp, "--dump-dom", "--virtual-time-budget=5000", "file://" + measured)
    found = re.search(r'<pre id="presk-layout">(.*?)</pre>', dom, re.S)
    if not found:
        return None
    return json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))


def positive(box):
    return box[2] > 0 and box[3] > 0


def layout_failures(laid, record):
    """Everything wrong with what the browser laid out, as messages (empty: all is well)."""
    if laid is None:
        return ["the measuring script wrote nothing: the page did not load"]
    failures = []
    svgs = {s["cls"]: s for s in laid["svgs"]}
    for name in ("type-map", "value-scales"):
        if name not in svgs:
            failures.append(f"no <svg class={name}> laid out")
        elif not positive(svgs[name]["box"]) or not (svgs[name]["content"][0] > 0 and svgs[name]["content"][1] > 0):
            failures.append(f"<svg class={name}>: box {svgs[name]['box']}, content {svgs[name]['content']}: empty")
    keys = [v["key"] for v in record["values"]]
    cells = {c["key"]: c for c in laid["cells"]}
    rows = {r["key"]: r for r in laid["rows"]}
    lines = set(laid["lines"])
    for key in keys:
        if key not in cells or not positive(cells[key]["box"]):
            failures.append(f"value {key}: no laid-out cell in the type map")
        elif cells[key]["link"] is None or cells[key]["link"][1:] not in lines:
            failures.append(f"value {key}: its cell links to {cells[key]['link']}, not a line of the program text")
        if key not in rows or not positive(rows[key]["box"]):
            failures.append(f"value {key}: no laid-out row on the value scales")
    if not laid["tables"] or not all(positive(t["box"]) and t["rows"] > 0 for t in laid["tables"]):
        failures.append(f"tables: {laid['tables']}")
    if laid["scroll_width"] > laid["page_width"]:
        failures.append(f"the page is {laid['scroll_width']} px wide in a {laid['page_width']} px window: something overflows")
    for element in laid["cells"] + laid["rows"]:
        if element["box"][0] + element["box"][2] > laid["page_width"]:
            failures.append(f"{element['key']} ends at x = {element['box'][0] + element['box'][2]:.0f}, past the page")
    if laid["resources"]:
        failures.append(f"the page fetched {laid['resources']}")
    return failures


def png_pixels(path):
    """The RGB(A) pixels of a non-interlaced 8-bit PNG (what chromium writes), row by row."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"PNG kind {header}"
    channels = 3 if colour == 2 else 4
    raw, stride, rows, previous = zlib.decompress(b"".join(chunks)), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def screenshot_colours(tmp, page_path):
    shot = os.path.join(tmp, "shot.png")
    chromium(tmp, f"--screenshot={shot}", "file://" + page_path)
    width, height, channels, rows = png_pixels(shot)
    colours = set()
    for row in rows[::2]:
        for x in range(0, width * channels, channels * 2):
            colours.add(row[x:x + 3])
    return width, height, colours


def main():
    if CHROMIUM is None:
        print("SKIPPED: no chromium command (scripts/install-deps installs Debian's chromium)")
        sys.exit(77)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        file = lambda name: os.path.join(tmp, name)
        run = lambda *args: subprocess.run([PRESK, *args], cwd=ROOT, check=True, capture_output=True, text=True)
        run("calibrate", "--precision", "examples/mlp.psk", "--entry", "loss", "--dim", "B=4", "--samples", "2",
            "--bits", "128", "--quiet", "--out", file("envelope.json"))
        record = json.loads(run("solve", "examples/mlp.psk", "--precision", file("envelope.json"), "--budget", "1e-3",
                                "--quiet", "--json", "--out", file("R.json"), "--report", file("page.html")).stdout)
        failures += layout_failures(layout(tmp, file("page.html")), record)

        # The screenshot shows each chosen type's colour (the type map's cells were painted).
        width, height, colours = screenshot_colours(tmp, file("page.html"))
        if width < 1000 or height < 1000:
            failures.append(f"screenshot {width}×{height}")
        palette = {"f64": b"\x9a\xa5\xb1", "f32": b"\x3b\x82\xc4", "bf16": b"\xe8\x89\x3a"}
        for chosen in {v["final"] for v in record["values"]}:
            if chosen in palette and palette[chosen] not in colours:
                failures.append(f"the screenshot has no pixel of {chosen}'s colour #{palette[chosen].hex()}")

        # The same checks on a page whose type-map SVG is empty must fail.
        with open(file("page.html"), encoding="utf-8") as f:
            page = f.read()
        emptied = re.sub(r'(<svg class="type-map"[^>]*>).*?(</svg>)', r"\1\2", page, flags=re.S)
        if emptied == page:
            failures.append("could not empty the type map's SVG (the page's markup changed?)")
        with open(file("empty.html"), "w", encoding="utf-8") as f:
            f.write(emptied)
        if not layout_failures(layout(tmp, file("empty.html")), record):
            failures.append("a page with an empty type-map SVG passed the layout checks")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"report in chromium: laid out, linked, offline and painted ({len(record['values'])} values)")


if __name__ == "__main__":
    main()
