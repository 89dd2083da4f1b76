"""The tests' model of a plot of events over an axis in lanes (src/plots/series.h: Tarmac's
plots/processors.svg, TT6's plots/sync.svg), and its comparison with a drawn SVG.

The model, from doc/plots.md: the axis starts at the first value counted (the origin); a
value below it counts at it; the slices are 2^k units wide, k the least with (highest value -
origin) >> k below 256; each lane (a named series with events) holds its events per slice."""

import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
SLICES = 256


def model(events, reach=()):
    """events: (x, series name) in the order counted; reach: further values the axis must
    cover (the origin too, when it comes first). Returns what the SVG should carry."""
    xs = list(reach) + [x for x, _ in events]
    if not xs:
        return {"origin": 0, "slice_width": 1, "slices": 0, "lanes": {}}
    origin = xs[0]
    last = max(max(x - origin, 0) for x in xs)
    k = 0
    while last >> k >= SLICES:
        k += 1
    n = (last >> k) + 1
    lanes = {}
    for x, name in events:
        lanes.setdefault(name, [0] * n)[max(x - origin, 0) >> k] += 1
    return {"origin": origin, "slice_width": 1 << k, "slices": n, "lanes": lanes}


def is_note(want):
    """Whether the plot is a one-line note, not lanes (doc/plots.md): it has no lane; or one
    lane, with the same events in every slice but the last (it would be a solid block), or
    the model's untimed_single (a format's rule: one processor without time stamps)."""
    lanes = [c for c in want["lanes"].values() if sum(c)]
    if len(lanes) != 1:
        return not lanes
    return bool(want.get("untimed_single")) or all(v == lanes[0][0] for v in lanes[0][:-1])


def note_of(path):
    """The note the SVG at path says instead of a plot, or None."""
    return ET.parse(path).getroot().get("data-note")


def drawn(path):
    """What the SVG at path carries, in the model's terms, and its texts."""
    root = ET.parse(path).getroot()
    g = next(e for e in root.iter(SVG + "g") if e.get("class") == "series")
    lanes = {}
    totals = {}
    for p in g.iter(SVG + "path"):
        counts = [int(v) for v in p.get("data-counts").split()]
        lanes[p.get("data-series")] = counts
        totals[p.get("data-series")] = int(p.get("data-total"))
    texts = [t.text or "" for t in root.iter(SVG + "text")]
    return {"origin": int(g.get("data-origin")), "slice_width": int(g.get("data-slice-width")),
            "slices": int(g.get("data-slices")), "lanes": lanes}, totals, texts


def compare(path, want, label, axis_label, check):
    """Calls check(description, expected, actual) for each fact of the plot at path."""
    if is_note(want):
        try:
            note = note_of(path)
        except Exception as e:
            note = str(e)
        check("%s is a one-line note, not lanes" % label, True, note is not None)
        return
    try:
        got, totals, texts = drawn(path)
    except Exception as e:  # a plot that does not parse fails every check below
        check("%s parses, with its series" % label, "yes", str(e))
        return
    for key in ("origin", "slice_width", "slices"):
        check("%s %s" % (label, key), want[key], got[key])
    check("%s: its lanes" % label, sorted(want["lanes"]), sorted(got["lanes"]))
    for name, counts in want["lanes"].items():
        check("%s: %s's events in each slice" % (label, name), counts,
              got["lanes"].get(name))
        check("%s: %s's total" % (label, name), sum(counts), totals.get(name))
    check("%s: the x axis says" % label, axis_label,
          axis_label if axis_label in texts else [t for t in texts if t.endswith(")")])
