#!/usr/bin/env python3
"""What a browser should show of calls/flamegraph.svg, from calls/folded.txt (doc/calls.md).

  flamegraph_expect.py check NAME FOLDED REPORT PNG
      FOLDED is the trace's calls/folded.txt; REPORT and PNG are what headless.py made of its
      flamegraph.svg in Chromium. Prints "NAME: description<TAB>expected<TAB>actual" lines:
      the document opened as SVG without parse errors, console messages, scripts or requests
      beyond itself; one frame per stack wide enough to draw (an "all" frame under the
      outermost functions, every stack of folded.txt and those of its callers), each named
      by its function (a C++ symbol demangled as c++filt -i reads it, the symbol in the
      tooltip), as wide as its instructions, standing on its caller from its left
      edge in order of name, its label inside it; and the screenshot shows each frame's
      colour where the frame is.

The expectations come from folded.txt alone: its stacks are summed into a tree here; nothing
is read from the SVG's source.
"""
import json
import re
import sys

import headless
from calls_expect import demangled  # c++filt -i's reading of each symbol

MIN_WIDTH = 0.1  # pixels: narrower frames are left out, with their callees (calls.md)
EPS = 0.11  # the SVG's coordinates have one decimal


def expected_tree(folded):
    """{stack tuple: inclusive instructions}, the empty stack ("all") included."""
    incl = {(): 0}
    for line in folded.splitlines():
        stack, n = line.rsplit(" ", 1)
        names = tuple(stack.split(";"))
        for depth in range(len(names) + 1):
            incl[names[:depth]] = incl.get(names[:depth], 0) + int(n)
    return incl


def frames_by_stack(titled):
    """{stack tuple: frame} for the drawn frames, each frame's stack found from where it is:
    its row (from the bottom "all" frame, one row per frame height and a pixel) and the frame
    of the row below whose left edge is the last at or before its own."""
    frames = []
    for t in titled:
        m = re.fullmatch(r"(.*) \((\d+) instructions, ([0-9.]+)%\)(?:; symbol (\S+))?",
                         t["title"])
        if not m or not t["box"]:
            return None, "a frame without a count or a bar: %r" % t
        frames.append(dict(t, name=m.group(1), count=int(m.group(2)),
                           percent=m.group(3), symbol=m.group(4)))
    if not frames:
        return {}, None
    bottom = max(f["box"]["y"] for f in frames)
    step = frames[0]["box"]["height"] + 1
    rows = {}
    for f in frames:
        depth = (bottom - f["box"]["y"]) / step
        if abs(depth - round(depth)) > 0.01:
            return None, "a frame between rows: %r" % f
        rows.setdefault(round(depth), []).append(f)
    by_stack = {}
    for depth in sorted(rows):
        for f in rows[depth]:
            if depth == 0:
                f["stack"] = ()
            else:
                below = [p for p in rows.get(depth - 1, []) if p["box"]["x"] <= f["box"]["x"] + EPS]
                if not below:
                    return None, "a frame standing on nothing: %r" % f
                parent = max(below, key=lambda p: p["box"]["x"])
                f["stack"] = parent["stack"] + (f["name"],)
                f["parent"] = parent
            if f["stack"] in by_stack:
                return None, "two frames of one stack: %r" % (f["stack"],)
            by_stack[f["stack"]] = f
    return by_stack, None


def check(name, folded_path, report_path, png_path):
    out = []

    def eq(what, want, got):
        out.append("%s: %s\t%s\t%s" % (name, what, want, got))

    with open(report_path) as f:
        rep = json.load(f)
    with open(folded_path) as f:
        incl = expected_tree(f.read())
    total = incl[()]
    eq("opens as an SVG document", ["svg", "http://www.w3.org/2000/svg"], rep["root"])
    eq("no XML parse error", [], rep["parse_errors"])
    eq("no console message or error", [], rep["console"])
    eq("no request but the file itself", ["file://" + rep["file"]], rep["requests"])
    eq("no script", 0, rep["scripts"])

    by_stack, err = frames_by_stack(rep["titled"])
    eq("the frames form stacks", None, err)
    if by_stack is None:
        by_stack = {}
    # a demangled name's tooltip gives its symbol; any other name is one c++filt leaves alone
    frames = list(by_stack.values())
    readable = demangled([f["symbol"] or f["name"] for f in frames])
    eq("each name is its symbol as c++filt -i reads it, the symbol in the tooltip if it differs",
       [], [(f["name"], f["symbol"]) for f in frames
            if readable[f["symbol"] or f["name"]] != f["name"] or f["symbol"] == f["name"]][:3])
    png = headless.Png(png_path)
    eq("the screenshot is the page's size", (int(rep["width"]), int(rep["height"])),
       (png.width, png.height))
    eq("the screenshot is not blank", True, len(png.colours()) > 2)
    if total == 0:
        eq("no frames without instructions", {}, by_stack)
        for line in out:
            print(line)
        return
    root = by_stack.get(())
    eq("an 'all' frame at the bottom", "all", root and root["name"])
    if not root:
        for line in out:
            print(line)
        return
    scale = root["box"]["width"] / total
    eq("the 'all' frame spans the image but for equal margins", True,
       abs(root["box"]["x"] * 2 + root["box"]["width"] - rep["width"]) < EPS)
    drawn = {s for s, n in incl.items()
             if all(incl[s[:d]] * scale >= MIN_WIDTH for d in range(len(s) + 1))}
    eq("frames drawn but not in folded.txt", [], sorted(set(by_stack) - drawn)[:5])
    eq("stacks of folded.txt wide enough but not drawn", [], sorted(drawn - set(by_stack))[:5])
    bad_count, bad_width, bad_x, bad_label, bad_colour = [], [], [], [], []
    for stack, f in sorted(by_stack.items()):
        box = f["box"]
        n = incl.get(stack)
        if f["count"] != n or f["percent"] != "%.2f" % (100.0 * n / total):
            bad_count.append((stack, n, f["title"]))
        if abs(box["width"] - n * scale) > EPS:
            bad_width.append((stack, n * scale, box["width"]))
        if stack:
            # callees from the caller's left edge, in byte order of name, those too narrow
            # to draw taking their place too
            parent = f["parent"]
            before = sum(incl[s] for s in incl if len(s) == len(stack) and
                         s[:-1] == stack[:-1] and s[-1].encode() < stack[-1].encode())
            if abs(box["x"] - (parent["box"]["x"] + before * scale)) > EPS:
                bad_x.append((stack, parent["box"]["x"] + before * scale, box["x"]))
        label, tb = f["text"], f["text_box"]
        if label is not None:
            fits = tb["x"] >= box["x"] and tb["x"] + tb["width"] <= box["x"] + box["width"]
            named = label == f["name"] or (label.endswith("..") and len(label) >= 5 and
                                            f["name"].startswith(label[:-2]))
            if not fits or not named:
                bad_label.append((stack, label, tb, box))
        if box["width"] >= 4:
            # a pixel row inside the bar, above any glyph, and away from its rounded corners
            want = tuple(int(c) for c in re.findall(r"\d+", f["fill"])[:3])
            got = png.pixel(int(box["x"] + box["width"] / 2), int(box["y"]) + 1)
            if max(abs(a - b) for a, b in zip(want, got)) > 4:
                bad_colour.append((stack, want, got))
    eq("each frame's title names its instructions and share", [], bad_count[:3])
    eq("each frame is as wide as its instructions (%.4f px each)" % scale, [], bad_width[:3])
    eq("callees stand on their caller from its left edge, by name", [], bad_x[:3])
    eq("labels are the name or 3 characters of it and more with '..', inside the frame", [],
       bad_label[:3])
    eq("the 'all' frame is labelled", "all", root["text"])
    eq("the screenshot shows each frame's colour where it is", [], bad_colour[:3])
    for line in out:
        print(line)


def main():
    if sys.argv[1] == "check":
        check(*sys.argv[2:6])
    else:
        sys.exit("usage: see the docstring")


if __name__ == "__main__":
    main()
