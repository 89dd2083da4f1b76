#!/usr/bin/env python3
"""Opens .tracemount/report.html in headless Chromium (headless.py's Browser) and reports what
the browser made of it.

  report_browser.py BROWSER OUTDIR TIMEOUT PAGE COLUMN
      Opens PAGE at a width of 1280 CSS pixels, then clicks the header of COLUMN (its text,
      "records") with the mouse, twice. Writes OUTDIR/report.json:
        console     console messages, uncaught exceptions and browser log entries of level
                    warning or error, as "level: text"
        requests    every URL the page asked for
        headers     the headers' texts
        rows        the rows' cell texts, in page order, as loaded
        sorted      the same after the first click, then reversed: after the second
        aria        the header's aria-sort after each click
        overflow    at each width (1280, 3840): the cells whose text is wider than the cell,
                    as "row,column: text", and whether the page scrolls sideways
      and OUTDIR/1280.png, OUTDIR/3840.png, screenshots at each width. Exits 0 when the page
      was opened and reported, whatever it held.
"""
import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import Browser, evaluate, messages, open_page, set_width  # noqa: E402

ROWS = r"""Array.from(document.querySelectorAll('#traces tbody tr'),
                     r => Array.from(r.cells, c => c.textContent))"""
HEADERS = r"""Array.from(document.querySelectorAll('#traces thead th'), c => c.textContent)"""
OVERFLOW = r"""(() => {
  const bad = [];
  document.querySelectorAll('#traces tr').forEach((r, i) => {
    Array.from(r.cells).forEach((c, j) => {
      if (c.scrollWidth > c.clientWidth + 1)
        bad.push(i + ',' + j + ': ' + c.textContent);
    });
  });
  const d = document.documentElement;
  return {cells: bad, scrolls_sideways: d.scrollWidth > d.clientWidth + 1};
})()"""






def click_header(b, s, column, timeout):
    """A real mouse click (press and release) in the middle of the button of header column."""
    box = evaluate(b, s, """(() => {
      const th = Array.from(document.querySelectorAll('#traces thead th'))
                   .find(h => h.textContent.trim() === %s);
      const r = th.querySelector('button').getBoundingClientRect();
      return {x: r.x + r.width / 2, y: r.y + r.height / 2};
    })()""" % json.dumps(column), timeout)
    for kind in ("mousePressed", "mouseReleased"):
        b.send("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"],
                                            "button": "left", "clickCount": 1},
               session=s, timeout=timeout)
    return evaluate(b, s, """Array.from(document.querySelectorAll('#traces thead th'))
      .find(h => h.textContent.trim() === %s).getAttribute('aria-sort')""" % json.dumps(column),
                    timeout)


def main():
    exe, outdir, timeout, page, column = (sys.argv[1], sys.argv[2], float(sys.argv[3]),
                                          sys.argv[4], sys.argv[5])
    os.makedirs(outdir, exist_ok=True)
    b = Browser(exe, outdir)
    try:
        s = open_page(b, timeout)
        set_width(b, s, 1280, 900, timeout)
        b.events = []
        nav = b.send("Page.navigate", {"url": "file://" + os.path.abspath(page)}, session=s,
                     timeout=timeout)
        if nav.get("errorText"):
            raise RuntimeError("%s: %s" % (page, nav["errorText"]))
        b.wait_event(s, "Page.loadEventFired", 0, timeout)
        report = {"headers": evaluate(b, s, HEADERS, timeout),
                  "rows": evaluate(b, s, ROWS, timeout), "overflow": {}, "aria": [],
                  "sorted": []}
        for width in (1280, 3840):
            set_width(b, s, width, 900, timeout)
            report["overflow"][str(width)] = evaluate(b, s, OVERFLOW, timeout)
            shot = b.send("Page.captureScreenshot", {"format": "png"}, session=s,
                          timeout=timeout)
            with open(os.path.join(outdir, "%d.png" % width), "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        set_width(b, s, 1280, 900, timeout)
        for _ in range(2):
            report["aria"].append(click_header(b, s, column, timeout))
            report["sorted"].append(evaluate(b, s, ROWS, timeout))
        console, requests = messages(b, s)
        report["console"] = console
        report["requests"] = requests
        with open(os.path.join(outdir, "report.json"), "w") as f:
            json.dump(report, f)
    finally:
        b.close()


if __name__ == "__main__":
    main()
