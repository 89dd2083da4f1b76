#!/usr/bin/env python3
"""Checks a trace folder's report.html (doc/views.md) against the folder it describes, and
what browsers made of it.

  trace_report_check.py page TRACE_DIR
      The page as written, read back with Python's HTML parser: its facts (the summary's pairs
      and the details' objects, numbers by their data-v) equal stats.json's, key for key in
      its order; its error count is stats.json's errors, its error lines errors.txt's first
      problems and its note lines errors.txt's first notes (20 at most of each: a note is a
      line that starts "note: "), and it links errors.txt; its views section links every file of the folder
      but itself, and nothing else; every link resolves to a file of the folder; each
      plots/*.svg of the folder is inline, its XML as the file holds it (less the XML
      declaration), and no other <svg>; it asks for nothing (no script, no src, no <link>,
      no url(), no @import).
  trace_report_check.py browser TRACE_DIR REPORT [nodata]
      A page as Chromium showed it (trace_report_browser.py's REPORT): no console message; no
      request but the page itself (nothing outside the mount's folder); every link a file of
      the folder; at each width no element whose content overflows it and no sideways scroll;
      every plot inside the window and drawn (shapes of some area; none asked with nodata).
  trace_report_check.py shot NAME PNG PALETTE_PAGE [nodata]
      A screenshot (Firefox's): not blank (more than 16 colours); not cut off at the right
      (its last 8 columns all one colour, the page's margin); the plots drawn: at least 500
      pixels in the colours the plots of PALETTE_PAGE fill and stroke with (their greys and
      white apart), of 2 of those colours at least, or of the one they have (with nodata:
      not asked).

Each prints one "description<TAB>expected<TAB>actual" line per check (lib.sh's
check_compared)."""
import html.parser
import json
import os
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import Png  # noqa: E402

ERROR_LINES = 20
INTERNAL = {"plots"}  # stats.json's objects the page leaves out
FIRST_PLOTS = ["plots/hot.svg", "plots/mix.svg", "plots/addresses.svg"]  # shown first
GREYS = {"#ffffff", "#e0e0e0", "#333333", "#000000", "none"}


def out(what, want, got):
    print(f"{what}\t{want}\t{got}")


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def elements(self):
        return [c for c in self.children if isinstance(c, Node)]

    def iter(self):
        yield self
        for c in self.elements():
            yield from c.iter()


VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "area", "base", "col", "source"}


class Tree(html.parser.HTMLParser):
    """The page as a tree of Nodes (HTML's void elements closed at once; SVG's self-closing
    tags too)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.at = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.at)
        self.at.children.append(n)
        if tag not in VOID:
            self.at = n

    def handle_startendtag(self, tag, attrs):
        self.at.children.append(Node(tag, attrs, self.at))

    def handle_endtag(self, tag):
        n = self.at
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.at = n.parent

    def handle_data(self, data):
        self.at.children.append(data)


def value(n):
    """The JSON value an element of the page shows (put_json in trace_report.c)."""
    t = n.attrs.get("data-t")
    if n.attrs.get("class") == "num":
        v = n.attrs["data-v"]
        return float(v) if re.search("[.eE]", v) else int(v)
    if t == "null":
        return None
    if t == "bool":
        return n.text() == "true"
    if t == "str":
        return n.text()
    if t == "array":
        if n.tag != "ul":
            return []
        return [value(li.elements()[0]) for li in n.elements()]
    if t == "object" and n.tag == "dl":
        return dict(pair(d.elements()[0], d.elements()[1]) for d in n.elements())
    if t == "object" and n.tag == "table":
        rows = [r for r in n.elements() if r.tag == "tr"]
        rows += [r for b in n.elements() if b.tag == "tbody" for r in b.elements()]
        return dict(pair(r.elements()[0], r.elements()[1]) for r in rows)
    raise ValueError("no value in <%s %s>" % (n.tag, n.attrs))


def pair(key, val):
    return key.text(), value(val.elements()[0])


def find(root, pred):
    return [n for n in root.iter() if pred(n)]


def folder_files(d):
    files = []
    for top, dirs, names in os.walk(d):
        dirs.sort()
        for name in sorted(names):
            rel = os.path.relpath(os.path.join(top, name), d)
            if rel != "report.html":
                files.append(rel)
    return sorted(files)


def page(trace_dir):
    text = open(os.path.join(trace_dir, "report.html"), encoding="utf-8").read()
    tree = Tree()
    tree.feed(text)
    root = tree.root
    stats = json.load(open(os.path.join(trace_dir, "stats.json")))
    out("the details leave out the plots object (tracemount's own counters)", [],
        [d.attrs["data-key"] for d in find(root, lambda n: n.attrs.get("data-key") in INTERNAL)])
    stats = {k: v for k, v in stats.items() if k not in INTERNAL}

    facts = find(root, lambda n: n.attrs.get("id") == "facts")[0]
    shown = value(find(facts, lambda n: n.tag == "dl")[0])
    for d in find(root, lambda n: "data-key" in n.attrs):
        shown[d.attrs["data-key"]] = value(d.elements()[0])
    shown = {k: shown[k] for k in stats if k in shown} | shown  # in stats.json's order ...
    out("facts equal stats.json's", json.dumps(stats), json.dumps(shown))
    out("... in its order (summary first, then details)",
        [k for k in stats if not isinstance(stats[k], (dict, list))] +
        [k for k in stats if isinstance(stats[k], (dict, list))],
        [n.elements()[0].text() for n in facts.iter() if n.tag == "div" and n.parent.tag == "dl"] +
        [d.attrs["data-key"] for d in find(root, lambda n: "data-key" in n.attrs)])

    errors = find(root, lambda n: n.attrs.get("id") == "errors")[0]
    every = open(os.path.join(trace_dir, "errors.txt"), encoding="utf-8",
                 errors="replace").read().splitlines(True)
    lines = [l for l in every if not l.startswith("note: ")][:ERROR_LINES]
    notes = [l for l in every if l.startswith("note: ")][:ERROR_LINES]
    pre = find(errors, lambda n: n.attrs.get("id") == "error-lines")
    out("the error lines are errors.txt's first problems", json.dumps("".join(lines)),
        json.dumps(pre[0].text() if pre else ""))
    pre = find(errors, lambda n: n.attrs.get("id") == "note-lines")
    out("the note lines are errors.txt's first notes", json.dumps("".join(notes)),
        json.dumps(pre[0].text() if pre else ""))
    count = find(errors, lambda n: n.attrs.get("class") == "num")
    if stats.get("errors", 0) or lines:
        out("the error count is stats.json's", stats.get("errors"),
            value(count[0]) if count else None)
    elif notes:
        out("no error, only notes: the page says no errors", True, "No errors in" in errors.text())
    else:
        out("no error: the page says errors.txt is empty", True, "is empty" in errors.text())
    out("errors.txt is linked", True,
        any(a.attrs.get("href") == "errors.txt" for a in find(errors, lambda n: n.tag == "a")))

    views = find(root, lambda n: n.attrs.get("id") == "views")[0]
    linked = sorted(urllib.parse.unquote(a.attrs["href"]) for a in views.iter() if a.tag == "a")
    out("every view is linked", folder_files(trace_dir), linked)
    hrefs = [a.attrs["href"] for a in root.iter() if a.tag == "a"]
    missing = [h for h in hrefs if not h.startswith("#") and
               not os.path.isfile(os.path.join(trace_dir, urllib.parse.unquote(h)))]
    out("every link resolves to a file of the folder", [], missing)
    ids = {n.attrs["id"] for n in root.iter() if "id" in n.attrs}
    out("every #link names a section", [],
        [h for h in hrefs if h.startswith("#") and h[1:] not in ids])

    plots, notes = drawn_plots(trace_dir)
    inline = []
    for p in plots:
        svg = open(os.path.join(trace_dir, p), encoding="utf-8").read()
        svg = re.sub(r"^<\?xml[^>]*\?>\n*", "", svg)
        if svg in text:
            inline.append(p)
    out("every plot with something to show is inline, as its file holds it", plots,
        sorted(inline))
    svgs = re.findall(r"<svg\b.*?</svg>", text, re.S)
    out("... and no other <svg>", len(plots), len(svgs))
    order = [re.search(r'<p class="caption"><a href="([^"]+)"', s).group(1) for s in
             re.split(r'<div class="figure">', text)[1:]]
    first = [p for p in FIRST_PLOTS if p in plots]
    out("the most telling plots come first (hot, mix, addresses)", first, order[:len(first)])
    ul = find(root, lambda n: n.attrs.get("class") == "notes")
    items = [(urllib.parse.unquote(li.elements()[0].attrs["href"]), li.text())
             for li in (ul[0].elements() if ul else [])]
    want = []
    for p, (title, why) in sorted(notes.items()):
        want.append((p, f"{p}: {title}: {why}"))
    out("each plot with nothing to show is a one-line note: path, title and why", want,
        sorted(items))
    bad = []
    for s in svgs:
        try:
            ET.fromstring(s)
        except ET.ParseError as e:
            bad.append(str(e))
    out("each inline <svg> is well-formed XML", [], bad)
    out("the page asks for nothing", [],
        re.findall(r"<script|<link|<img|<iframe|\bsrc=|url\(|@import", text, re.I))


def drawn_plots(trace_dir):
    """The folder's plots with something to show, sorted, and the others' title and note."""
    plots, notes = [], {}
    for p in folder_files(trace_dir):
        if not re.fullmatch(r"plots/[^/]+\.svg", p):
            continue
        root = ET.parse(os.path.join(trace_dir, p)).getroot()
        if root.get("data-note") is None:
            plots.append(p)
        else:
            notes[p] = (root.find("{http://www.w3.org/2000/svg}title").text,
                        root.get("data-note"))
    return sorted(plots), notes


def browser(trace_dir, report, nodata):
    d = json.load(open(report))
    page_url = "file://" + os.path.abspath(os.path.join(trace_dir, "report.html"))
    out("no console message", [], d["console"])
    out("no request but the page itself", [page_url], d["requests"])
    prefix = "file://" + os.path.abspath(trace_dir) + "/"
    bad = [u for u in d["links"] if not u.startswith(prefix) or not os.path.isfile(
        urllib.parse.unquote(u[len("file://"):]))]
    out("every link, as the browser resolves it, is a file of the folder", [], bad)
    n_plots = len(drawn_plots(trace_dir)[0])
    for width, w in d["widths"].items():
        out(f"at {width} px no element's content overflows it", [], w["overflow"])
        out(f"at {width} px the page does not scroll sideways", False, w["scrolls_sideways"])
        out(f"at {width} px every plot shows", n_plots, len(w["plots"]))
        out(f"at {width} px every plot is inside the window", [],
            [p for p in w["plots"] if p["left"] < 0 or p["right"] > int(width) + 0.5 or
             p["width"] < 100])
        out(f"at {width} px every plot is drawn", [] if not nodata else "nodata",
            [p for p in w["plots"] if not p["drawn"]] if not nodata else "nodata")


def palette(page_path):
    text = open(page_path, encoding="utf-8").read()
    cols = set()
    for s in re.findall(r"<svg\b.*?</svg>", text, re.S):
        cols.update(c.lower() for c in re.findall(r'(?:fill|stroke)="(#[0-9a-fA-F]{6})"', s))
    return {bytes.fromhex(c[1:]) for c in cols - GREYS}


def shot(name, png_path, palette_page, nodata):
    png = Png(png_path)
    cols = palette(palette_page)
    bpp, counts, distinct, edge = png.bpp, dict.fromkeys(cols, 0), set(), set()
    for y, row in enumerate(png.rows):
        row = bytes(row)
        for c in cols:  # an opaque pixel of colour c: its 4 bytes (Firefox's PNGs are RGBA)
            counts[c] += row.count(c + b"\xff") if bpp == 4 else row.count(c)
        if y % 8 == 0 and len(distinct) < 1000:
            distinct.update(row[i:i + 3] for i in range(0, len(row), bpp * 7))
        edge.update(row[i:i + 3] for i in range(len(row) - 8 * bpp, len(row), bpp))
    out(f"{name}: not blank (over 16 colours)", True, len(distinct) > 16)
    out(f"{name}: nothing cut off at the right edge (its last 8 columns one colour)", 1,
        len(edge))
    if nodata:
        return
    out(f"{name}: the plots are drawn (500 pixels or more in their colours)", True,
        sum(counts.values()) >= 500)
    out(f"{name}: ... in 2 of their colours at least (or the one they have)", True,
        len([c for c in counts.values() if c >= 20]) >= min(2, len(cols)))


def main():
    what = sys.argv[1]
    if what == "page":
        page(sys.argv[2])
    elif what == "browser":
        browser(sys.argv[2], sys.argv[3], len(sys.argv) > 4)
    elif what == "shot":
        shot(sys.argv[2], sys.argv[3], sys.argv[4], len(sys.argv) > 5)
    else:
        sys.exit("usage: see the docstring")


if __name__ == "__main__":
    main()
