#!/usr/bin/env python3
"""Opens trace folders' report.html in headless Chromium (headless.py's Browser) and reports
what the browser made of each.

  trace_report_browser.py BROWSER OUTDIR TIMEOUT PAGE...
      Opens each PAGE (the Nth from 0) at widths of 1280 and 3840 CSS pixels and writes
      OUTDIR/N.json:
        console     console messages, uncaught exceptions and browser log entries of level
                    warning or error, as "level: text"
        requests    every URL the page asked for
        links       every link's resolved URL (a.href), fragments (#...) apart
        widths      at each width ("1280", "3840"):
          overflow          the elements whose content is wider than their box (scrollWidth
                            over clientWidth), as "tag.class: text"
          scrolls_sideways  whether the page is wider than the window
          plots             each inline <svg>: its rendered box's left and right edges, and
                            the number of its path, polyline and rect elements drawn with a
                            rendered box of some area, its first rect (the background) apart
      and OUTDIR/N-1280.png, OUTDIR/N-3840.png, screenshots of the page's top at each width.
      Exits 0 when every page was opened and reported, whatever it held.
"""
import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless import Browser, evaluate, messages, open_page, set_width  # noqa: E402

LINKS = r"""Array.from(document.querySelectorAll('a[href]'))
  .filter(a => !a.getAttribute('href').startsWith('#')).map(a => a.href)"""
LAYOUT = r"""(() => {
  const bad = [];
  document.querySelectorAll('body *').forEach(e => {
    if (e.closest('svg') || e.tagName === 'HTML') return;
    if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
      bad.push(e.tagName.toLowerCase() + '.' + e.className + ': ' +
               e.textContent.slice(0, 80));
  });
  const plots = Array.from(document.querySelectorAll('svg'), s => {
    const r = s.getBoundingClientRect();
    const drawn = Array.from(s.querySelectorAll('path, polyline, rect')).slice(1)
      .filter(e => { const b = e.getBoundingClientRect(); return b.width * b.height > 0 ||
                     (e.tagName !== 'rect' && b.width + b.height > 0); }).length;
    return {left: r.left, right: r.right, width: r.width, height: r.height, drawn: drawn};
  });
  const d = document.documentElement;
  return {overflow: bad, scrolls_sideways: d.scrollWidth > d.clientWidth + 1, plots: plots};
})()"""








def main():
    exe, outdir, timeout, pages = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    os.makedirs(outdir, exist_ok=True)
    b = Browser(exe, outdir)
    try:
        s = open_page(b, timeout)
        for n, page in enumerate(pages):
            set_width(b, s, 1280, 1600, timeout)
            b.events = []
            nav = b.send("Page.navigate", {"url": "file://" + os.path.abspath(page)},
                         session=s, timeout=timeout)
            if nav.get("errorText"):
                raise RuntimeError("%s: %s" % (page, nav["errorText"]))
            b.wait_event(s, "Page.loadEventFired", 0, timeout)
            report = {"file": os.path.abspath(page), "links": evaluate(b, s, LINKS, timeout),
                      "widths": {}}
            for width in (1280, 3840):
                set_width(b, s, width, 1600, timeout)
                report["widths"][str(width)] = evaluate(b, s, LAYOUT, timeout)
                shot = b.send("Page.captureScreenshot", {"format": "png"}, session=s,
                              timeout=timeout)
                with open(os.path.join(outdir, "%d-%d.png" % (n, width)), "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            report["console"], report["requests"] = messages(b, s)
            with open(os.path.join(outdir, "%d.json" % n), "w") as f:
                json.dump(report, f)
            print("%s: reported" % page)
    finally:
        b.close()


if __name__ == "__main__":
    main()
