#!/usr/bin/env python3
"""Checks a trace's plots/ (doc/plots.md) against its stats.json and what a browser made of
them (headless.py's report).

  plots_check.py data TRACE STATS MIX FOOTPRINT ADDRESSES
      The plotted data against stats.json's counts, which the format's own statistics make:
      mix.svg's bands carry each class's records (data-records) as stats.json's classes say,
      for every class with records and no other, and sum to its records; footprint.svg's
      lines carry the pages of stats.json's plots object, and exist when the format gave
      addresses; for BYU, the accesses are its memory references and the pages at least its
      own distinct pages (byu.distinct_pages_4k, counted over code and data together); where
      the format counts code_pages_4k or data_pages_4k itself (Tarmac, QEMU4V, CIS501, TT6,
      TT6E, FULL), the same numbers. addresses.svg's panels (fetch, read, write) sum to the
      accesses, its rows' counts to the panels', it has at most 8 regions of rows
      (data-region-rows), each a run of rows of its size (data-region-bytes) from the top down,
      below the region above; with 4 KiB rows everywhere, the rows with fetches are the code
      pages and those with reads or writes the data pages; for TT6, TT6E and FULL the fetches are the
      instructions.
  plots_check.py model TRACE ADDRESSES EXPECTED
      addresses.svg against a model's accesses (full_model.py's accesses.json, by 4 KiB page):
      each panel's total, and its regions, rows and their counts, as model_regions cuts the
      pages by doc/plots.md's rule.
  plots_check.py registers TRACE REGISTERS STATS EXPECTED
      FULL's registers.svg against a model's register changes (full_model.py's
      registers.json): its rows are the registers that change, in order, with their counts;
      its total is the sum of stats.json's full.registers_changed.
  plots_check.py browser TRACE REPORT [nodata]
      A plot as Chromium showed it: no parse error, console message, script or request but
      itself; data drawn (a path or polyline of some area; none with nodata, for a plot that
      says it has no data); every text inside the picture and no two texts overlapping
      (a text too long for its box runs into its neighbour or off the picture).
  plots_check.py bars SVG
      Lists the bars of plots/hot.svg (src/plots/bars.c), one a line:
      RANK<TAB>NAME<TAB>VALUE<TAB>TOTAL<TAB>EXTRA, from their data-* attributes (TOTAL "-"
      without data-total), for the caller to compare with its model's.
  plots_check.py hot TRACE REPORT SVG [nobars]
      plots/hot.svg as Chromium showed it: no parse error, console message, script or request
      but itself; one bar drawn per bar of SVG, the widest spanning the plot area (its x
      axis ends at the largest bar); each bar's name left of its bar, in its row; every text
      inside the picture and no two overlapping. With nobars: no bar, and the empty message.
  plots_check.py note TRACE SVG
      A plot with nothing to show is a one-line note (tm_svg_note): its svg element says
      why in data-note, it is at most 48 pixels high and holds one <text>, which ends with
      the note; no path, polyline or heat map.
  plots_check.py processors TRACE SVG
      processors.svg is no solid block: a one-line note (as above), or lanes where a single
      lane's counts vary (every slice but the last, which the trace may end in, not alike).

Each check prints one "description<TAB>expected<TAB>actual" line per check (lib.sh's
check_compared)."""
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def out(what, want, got):
    print(f"{what}\t{want}\t{got}")


def heat_rows(svg):
    """addresses.svg's panels' totals and rows' counts, by data-panel and data-row; none, and
    no heat map, for a note (a plot with nothing to show)."""
    root = ET.parse(svg).getroot()
    if root.get("data-note"):
        return {}, [], None
    panels = {e.get("data-panel"): int(e.get("data-total"))
              for e in root.iter(SVG + "g") if e.get("data-panel") is not None}
    rows = [(e.get("data-row"), [int(x) for x in e.get("data-counts").split()])
            for e in root.iter(SVG + "rect") if e.get("data-row") is not None]
    heat = next(e for e in root.iter(SVG + "g") if e.get("class") == "heatmap")
    return panels, rows, heat


def region_rows(rows, heat):
    """addresses.svg's regions from the top down, as (row bytes, rows' first addresses), by
    the heat map's data-region-rows and data-region-bytes."""
    sizes = [int(x) for x in heat.get("data-region-bytes").split()]
    counts = [int(x) for x in heat.get("data-region-rows").split()]
    starts, regions = [int(r, 16) for r, _ in rows], []
    for size, n in zip(sizes, counts):
        regions.append((size, starts[:n]))
        starts = starts[n:]
    return regions


def model_regions(pages):
    """The rows addresses.svg draws of accesses counted by 4 KiB page ({address: [fetches,
    reads, writes]}), by doc/plots.md's rule: blocks of 2^s bytes, the smallest s from 12 that
    makes at most 128 of them; cut at the 7 widest gaps of at least one untouched block (the
    lowest first of equal ones); each region in the smallest rows, doubling, that cover it from
    its lowest block up in at most 128 // regions rows. Returns (row bytes of each region,
    [(first address in hex, counts)]), from the top down."""
    shift = 12
    while len({a >> shift for a in pages}) > 128:
        shift += 1
    blocks = sorted({a >> shift for a in pages})
    gaps = sorted((-(b - a), i) for i, (a, b) in enumerate(zip(blocks, blocks[1:])) if b - a > 1)
    cuts = sorted(i for _, i in gaps[:7])
    regions, begin = [], 0
    for end in cuts + [len(blocks) - 1]:
        regions.append((blocks[begin], blocks[end]))
        begin = end + 1
    limit, sizes, rows = 128 // len(regions) if regions else 0, [], []
    for first, last in reversed(regions):
        k = 0
        while ((last - first) >> k) + 1 > limit:
            k += 1
        sizes.append(1 << (shift + k))
        for j in range((last - first) >> k, -1, -1):
            counts = [0, 0, 0]
            for a, c in pages.items():
                if first <= a >> shift <= last and (a >> shift) - first >> k == j:
                    counts = [x + y for x, y in zip(counts, c)]
            rows.append((hex(first + (j << k) << shift), counts))
    return sizes, rows


def addresses(trace, stats, svg):
    plots = stats["plots"]
    panels, rows, heat = heat_rows(svg)
    if heat is None:
        out(f"{trace}: addresses.svg is a note where there is no access", 0, plots["accesses"])
        return
    out(f"{trace}: addresses.svg's panels", ["fetch", "read", "write"], sorted(panels))
    out(f"{trace}: addresses.svg's panels sum to the accesses", plots["accesses"],
        sum(panels.values()))
    out(f"{trace}: addresses.svg's rows sum to its panels",
        [panels.get(k, 0) for k in ("fetch", "read", "write")],
        [sum(c[k] for _, c in rows) for k in range(3)])
    regions = region_rows(rows, heat)
    out(f"{trace}: addresses.svg's regions are at most 8, their rows as many as it says",
        [True, int(heat.get("data-rows"))], [len(regions) <= 8, len(rows)])
    out(f"{trace}: addresses.svg's regions are runs of adjacent rows of their size, from "
        "the top down, apart", True, all(
            all(a - b == size for a, b in zip(starts, starts[1:])) for size, starts in regions)
        and all(lower[1][0] < upper[1][-1] for upper, lower in zip(regions, regions[1:])))
    if all(size == 4096 for size, _ in regions):
        out(f"{trace}: addresses.svg's rows with fetches are the code pages",
            plots["code_pages_4k"], sum(c[0] > 0 for _, c in rows))
        out(f"{trace}: addresses.svg's rows with reads or writes are the data pages",
            plots["data_pages_4k"], sum(c[1] + c[2] > 0 for _, c in rows))
    own = stats.get(stats["format"], {})
    if stats["format"] in ("tt6", "tt6e", "full"):
        out(f"{trace}: addresses.svg's fetches are the instructions", own["instructions"],
            panels.get("fetch"))
    if stats["format"] in ("tarmac", "qemu4v"):  # executed and condition-failed alike
        out(f"{trace}: addresses.svg's fetches are the din's",
            own["din"]["fetches"], panels.get("fetch"))
    if stats["format"] == "cis501":  # each micro-op's load a read, its store a write
        out(f"{trace}: addresses.svg's reads and writes are the loads and stores",
            [stats["classes"]["loads"], stats["classes"]["stores"]],
            [panels.get("read", 0), panels.get("write", 0)])


def model(trace, svg, expected_path):
    want = json.load(open(expected_path))
    panels, rows, heat = heat_rows(svg)
    out(f"{trace}: addresses.svg's panels are the model's accesses",
        {k: want[k] for k in ("fetch", "read", "write")}, panels)
    sizes, model_rows = model_regions({int(a, 16): c for a, c in want["pages"].items()})
    out(f"{trace}: addresses.svg's regions are the model's, with their row sizes",
        sizes, [int(x) for x in heat.get("data-region-bytes").split()] if heat is not None else [])
    out(f"{trace}: addresses.svg's rows are the model's regions' rows, with their counts",
        model_rows, rows)


def registers(trace, svg, stats_path, expected_path):
    want = json.load(open(expected_path))
    stats = json.load(open(stats_path))
    panels, rows, _ = heat_rows(svg)
    out(f"{trace}: registers.svg's rows are the model's registers, with their writes",
        [[k, [v]] for k, v in want.items()], [[k, c] for k, c in rows])
    out(f"{trace}: registers.svg's writes are stats.json's registers_changed",
        sum(stats["full"]["registers_changed"].values()), panels.get("writes", 0))


def data(trace, stats_path, mix_path, footprint_path, addresses_path):
    stats = json.load(open(stats_path))
    mix = ET.parse(mix_path).getroot()
    bands = {e.get("data-class"): int(e.get("data-records"))
             for e in mix.iter(SVG + "path") if e.get("data-class") is not None}
    classes = {k: v for k, v in stats["classes"].items() if v}
    # a tag (CIS501's loads...) is no class of its own: only the format's exclusive classes
    # are bands, and they sum to the records
    out(f"{trace}: mix.svg's bands sum to the records", stats["records"], sum(bands.values()))
    out(f"{trace}: mix.svg's bands are the classes with records, with their counts",
        sorted((k, v) for k, v in classes.items() if k in bands), sorted(bands.items()))
    out(f"{trace}: mix.svg's title says the records",
        True, mix.find(SVG + "title").text.endswith(" records)"))
    foot = ET.parse(footprint_path).getroot()
    lines = {e.get("data-series"): int(e.get("data-pages")) for e in foot.iter(SVG + "polyline")}
    plots = stats["plots"]
    if plots["accesses"]:
        out(f"{trace}: footprint.svg's lines carry the pages",
            {"code": plots["code_pages_4k"], "data": plots["data_pages_4k"]}, lines)
    else:
        out(f"{trace}: footprint.svg has no lines without addresses", {}, lines)
    out(f"{trace}: plots' slices cover the records", True,
        plots["slices"] * plots["slice_records"] >= stats["records"] >
        (plots["slices"] - 1) * plots["slice_records"] or stats["records"] == 0)
    # the format's own count of the same pages (Tarmac and QEMU4V code and data, CIS501 data),
    # by its own statistics' code
    own = stats.get(stats["format"], {})
    for key in ("code_pages_4k", "data_pages_4k"):
        if key in own:
            out(f"{trace}: plots' {key} is the format's own", own[key], plots[key])
    if stats["format"] == "byu":
        byu = stats["byu"]
        out(f"{trace}: the accesses are BYU's memory references", byu["memory_references"],
            plots["accesses"])
        pages = plots["code_pages_4k"] + plots["data_pages_4k"]
        out(f"{trace}: code and data pages, apart, are at least BYU's pages and at most twice",
            True, byu["distinct_pages_4k"] <= pages <= 2 * byu["distinct_pages_4k"])
    addresses(trace, stats, addresses_path)


def overlap(a, b):
    return (min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"]) > 1 and
            min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"]) > 1)


def texts_fit(trace, r):
    """Every text of the browser's report r inside the picture, and no two overlapping."""
    w, h = r["width"], r["height"]
    outside = [t["text"] for t in r["texts"]
               if t["box"]["x"] < 0 or t["box"]["y"] < 0 or
               t["box"]["x"] + t["box"]["width"] > w or t["box"]["y"] + t["box"]["height"] > h]
    out(f"{trace}: every text inside the picture", [], outside)
    texts = r["texts"]
    clashes = [(a["text"], b["text"]) for i, a in enumerate(texts) for b in texts[i + 1:]
               if overlap(a["box"], b["box"])]
    out(f"{trace}: no two texts overlap", [], clashes)


def browser(trace, report_path, nodata=None):
    r = json.load(open(report_path))
    out(f"{trace}: opened as SVG", ["svg", "http://www.w3.org/2000/svg"], r["root"])
    out(f"{trace}: no parse error", [], r["parse_errors"])
    out(f"{trace}: no console message", [], r["console"])
    out(f"{trace}: no request but itself", 1, len(r["requests"]))
    out(f"{trace}: no script", 0, r["scripts"])
    out(f"{trace}: data drawn", nodata is None,
        r["shapes"]["path"] + r["shapes"]["polyline"] > 0)
    texts_fit(trace, r)


def svg_bars(svg_path):
    return [g for g in ET.parse(svg_path).getroot().iter(SVG + "g")
            if g.get("class") == "bar"]


def bars(svg_path):
    for g in svg_bars(svg_path):
        print("\t".join([g.get("data-rank"), g.get("data-name"), g.get("data-value"),
                         g.get("data-total", "-"), g.get("data-extra")]))


def hot(trace, report_path, svg_path, nobars=None):
    r = json.load(open(report_path))
    out(f"{trace}: opened as SVG", ["svg", "http://www.w3.org/2000/svg"], r["root"])
    out(f"{trace}: no parse error", [], r["parse_errors"])
    out(f"{trace}: no console message", [], r["console"])
    out(f"{trace}: no request but itself", 1, len(r["requests"]))
    out(f"{trace}: no script", 0, r["scripts"])
    drawn = r["titled"]
    out(f"{trace}: one bar drawn per bar", len(svg_bars(svg_path)), len(drawn))
    out(f"{trace}: bars drawn", nobars is None, len(drawn) > 0)
    if nobars is not None:
        # a note: "TITLE: no calls..." (tm_svg_note)
        out(f"{trace}: says it has none", True,
            any(t["text"].startswith("no ") or ": no " in t["text"] for t in r["texts"]))
    if drawn:
        left = drawn[0]["box"]["x"]
        out(f"{trace}: the widest bar spans the plot area", True,
            max(b["box"]["width"] for b in drawn) >= 400)
        astray = [b["text"] for b in drawn
                  if not (0 <= b["text_box"]["x"] and
                          b["text_box"]["x"] + b["text_box"]["width"] <= left and
                          b["box"]["y"] - 4 <= b["text_box"]["y"] and
                          b["text_box"]["y"] + b["text_box"]["height"] <=
                          b["box"]["y"] + b["box"]["height"] + 4)]
        out(f"{trace}: each name left of its bar, in its row", [], astray)
    texts_fit(trace, r)


def note(trace, svg_path):
    root = ET.parse(svg_path).getroot()
    why = root.get("data-note")
    out(f"{trace}: says why in data-note", True, bool(why))
    out(f"{trace}: one line high", True, float(root.get("height")) <= 48)
    texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    out(f"{trace}: one text, ending with the note", [True],
        [t.endswith(why or "-") or t.endswith("...") for t in texts])
    out(f"{trace}: nothing drawn", 0,
        len(list(root.iter(SVG + "path"))) + len(list(root.iter(SVG + "polyline"))))


def processors(trace, svg_path):
    root = ET.parse(svg_path).getroot()
    if root.get("data-note") is not None:
        note(trace, svg_path)
        return
    lanes = [[int(v) for v in e.get("data-counts").split()] for e in root.iter(SVG + "path")
             if e.get("data-series") is not None]
    out(f"{trace}: lanes drawn", True, len(lanes) > 0)
    if len(lanes) == 1:
        out(f"{trace}: the one lane's counts vary", True, len(set(lanes[0][:-1])) > 1)


if __name__ == "__main__":
    if sys.argv[1] == "data":
        data(*sys.argv[2:7])
    elif sys.argv[1] == "registers":
        registers(*sys.argv[2:6])
    elif sys.argv[1] == "model":
        model(*sys.argv[2:5])
    elif sys.argv[1] == "browser":
        browser(*sys.argv[2:5])
    elif sys.argv[1] == "bars":
        bars(sys.argv[2])
    elif sys.argv[1] == "note":
        note(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "processors":
        processors(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "hot":
        hot(*sys.argv[2:6])
    else:
        sys.exit(__doc__)
