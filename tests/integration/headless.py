#!/usr/bin/env python3
"""Opens files in headless Chromium and reports what the browser made of them.

  headless.py BROWSER OUTDIR TIMEOUT FILE...
      Starts BROWSER (chromium) once, headless, driven through the DevTools protocol on a pipe
      (--remote-debugging-pipe: no port, no third-party client), and opens each FILE in turn
      in one page, made the size of the file's root element. For the Nth FILE (from 0) it writes
      OUTDIR/N.json, what the page held:
        root            the document element's name and namespace
        parse_errors    the text of any <parsererror> Chromium put in (a file that is not
                        well-formed XML shows "This page contains the following errors")
        console         console messages, uncaught exceptions and browser log entries of
                        level warning or error, as "level: text"
        requests        every URL the page asked for (the file itself, and anything it links)
        scripts         the number of <script> elements
        width, height   the root element's rendered size (CSS pixels)
        titled          each element that has a <title> child: its title, the rendered box
                        (getBoundingClientRect: x, y, width, height) and fill of its first
                        <rect>, and its first <text>'s content and rendered box
        texts           every <text> element's content and rendered box
        shapes          for path, polyline and rect: the number of such elements drawn
                        with a rendered box of some area (an empty drawing has none)
      and OUTDIR/N.png, a screenshot of the page. TIMEOUT bounds each file's load, in seconds.
      The browser's profile, home and log (browser.log) are in OUTDIR too. Prints the time it
      took to start and to open each file; exits 0 when every file was opened and reported,
      whatever they held.

The checks belong to the caller; Png reads a screenshot back for them.
"""
import base64
import itertools
import json
import os
import select
import struct
import subprocess
import sys
import time
import zlib


class Browser:
    """One Chromium process and its DevTools pipe: its fd 3 reads our commands, fd 4 writes
    replies and events, each a JSON text ended by a NUL."""

    def __init__(self, exe, folder):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # the child's fds 3 and 4 (dup2 makes them inheritable; os.pipe's fds are not, so
        # nothing else leaks into the browser)
        def child_fds():
            r, w = os.dup(to_browser_r), os.dup(from_browser_w)  # above 4: not clobbered
            os.dup2(r, 3)
            os.dup2(w, 4)

        # its profile, home, settings, caches and crash reports in folder, not the user's
        profile, home = os.path.join(folder, "profile"), os.path.join(folder, "home")
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home + "/.config",
                   XDG_CACHE_HOME=home + "/.cache", XDG_DATA_HOME=home + "/.local/share")
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--mute-audio",
             "--hide-scrollbars",
             # a container's /dev/shm may be 64 MiB, too small for Chromium's shared memory
             "--disable-dev-shm-usage", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(folder, "browser.log"), "wb"),
            env=env, preexec_fn=child_fds, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buf = b""
        self.next_id = 0
        self.events = []  # (sessionId, method, params), in order of arrival

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001: it is going anyway
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from the browser in time")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise EOFError("the browser closed its pipe (exit status %s)" %
                                   self.proc.poll())
                self.buf += chunk
        text, self.buf = self.buf.split(b"\0", 1)
        return json.loads(text)

    def send(self, method, params=None, session=None, timeout=30):
        """Sends a command and returns its result; events meanwhile are kept."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m["result"]
            if "method" in m:
                self.events.append((m.get("sessionId"), m["method"], m.get("params", {})))

    def wait_event(self, session, method, since, timeout):
        """Waits for an event of the session, from the index since of self.events on."""
        deadline = time.monotonic() + timeout
        while True:
            for ev in self.events[since:]:
                if ev[0] == session and ev[1] == method:
                    return ev[2]
            since = len(self.events)
            m = self._read_message(deadline)
            if "method" in m:
                self.events.append((m.get("sessionId"), m["method"], m.get("params", {})))


# Runs in the page: what the document holds, as JSON-able values.
INSPECT = r"""(() => {
  const d = document, root = d.documentElement;
  const box = e => { const r = e.getBoundingClientRect();
                     return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  const titled = [];
  for (const t of d.getElementsByTagNameNS('*', 'title')) {
    const g = t.parentNode;
    if (g === root) continue;
    const rect = g.getElementsByTagNameNS('*', 'rect')[0];
    const text = g.getElementsByTagNameNS('*', 'text')[0];
    titled.push({title: t.textContent,
                 box: rect ? box(rect) : null,
                 fill: rect ? getComputedStyle(rect).fill : null,
                 text: text ? text.textContent : null,
                 text_box: text ? box(text) : null});
  }
  const size = root ? box(root) : {width: 0, height: 0};
  const texts = Array.from(d.getElementsByTagNameNS('*', 'text'),
                           e => ({text: e.textContent, box: box(e)}));
  const shapes = {};
  for (const name of ['path', 'polyline', 'rect']) {
    shapes[name] = 0;
    for (const e of d.getElementsByTagNameNS('*', name)) {
      const r = e.getBoundingClientRect();
      shapes[name] += r.width > 0 && r.height > 0;
    }
  }
  return {root: root ? [root.localName, root.namespaceURI] : null,
          parse_errors: Array.from(d.getElementsByTagNameNS('*', 'parsererror'),
                                   e => e.textContent),
          scripts: d.getElementsByTagNameNS('*', 'script').length,
          width: size.width, height: size.height, titled: titled, texts: texts,
          shapes: shapes};
})()"""


def open_page(b, timeout):
    """The page the browser opened with (about:blank), its events reported; returns its
    session."""
    targets = b.send("Target.getTargets", timeout=timeout)["targetInfos"]
    pages = [t["targetId"] for t in targets if t["type"] == "page"]
    target = pages[0] if pages else b.send("Target.createTarget", {"url": "about:blank"},
                                           timeout=timeout)["targetId"]
    s = b.send("Target.attachToTarget", {"targetId": target, "flatten": True},
               timeout=timeout)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        b.send(domain + ".enable", session=s, timeout=timeout)
    return s


def open_file(b, s, path, timeout):
    """Opens one file in the page of session s; returns (report, PNG bytes)."""
    b.events = []
    nav = b.send("Page.navigate", {"url": "file://" + os.path.abspath(path)}, session=s,
                 timeout=timeout)
    if nav.get("errorText"):
        raise RuntimeError("%s: %s" % (path, nav["errorText"]))
    b.wait_event(s, "Page.loadEventFired", 0, timeout)
    rep = b.send("Runtime.evaluate", {"expression": INSPECT, "returnByValue": True},
                 session=s, timeout=timeout)
    if "exceptionDetails" in rep:
        raise RuntimeError("inspecting %s: %s" % (path, rep["exceptionDetails"]))
    report = rep["result"]["value"]
    width = max(1, int(report["width"] + 0.5))
    height = max(1, int(report["height"] + 0.5))
    b.send("Emulation.setDeviceMetricsOverride",
           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
           session=s)
    # optimizeForSpeed: unfiltered rows, which Png reads back fast
    shot = b.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True},
                  session=s, timeout=timeout)
    png = base64.b64decode(shot["data"])
    console, requests = messages(b, s)
    report["console"] = console
    report["requests"] = requests
    return report, png


def evaluate(b, s, expression, timeout):
    """The value of a JavaScript expression in page session s; raises on an exception."""
    rep = b.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                 session=s, timeout=timeout)
    if "exceptionDetails" in rep:
        raise RuntimeError("%s: %s" % (expression, rep["exceptionDetails"]))
    return rep["result"].get("value")


def set_width(b, s, width, height, timeout):
    """Makes page session s's viewport width x height CSS pixels."""
    b.send("Emulation.setDeviceMetricsOverride",
           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
           session=s, timeout=timeout)


def messages(b, s):
    """What page session s said so far: its console messages, uncaught exceptions and log
    entries of level warning or error ("level: text"), and the URLs it asked for."""
    console, requests = [], []
    for sess, method, p in b.events:
        if sess != s:
            continue
        if method == "Runtime.consoleAPICalled":
            console.append("%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in p["args"])))
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            console.append("exception: %s" % d.get("exception", {}).get(
                "description", d.get("text")))
        elif method == "Log.entryAdded" and p["entry"]["level"] in ("warning", "error"):
            console.append("%s: %s" % (p["entry"]["level"], p["entry"]["text"]))
        elif method == "Network.requestWillBeSent":
            requests.append(p["request"]["url"])
    return console, requests


class Png:
    """An 8-bit RGB or RGBA PNG, as Chromium writes its screenshots: width, height, and
    pixel(x, y) -> (r, g, b)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            raise ValueError("%s: not a PNG" % path)
        pos, idat = 8, b""
        while pos < len(data):
            n, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + n]
            if kind == b"IHDR":
                self.width, self.height, depth, ctype, _, _, lace = struct.unpack(">IIBBBBB", body)
                if depth != 8 or ctype not in (2, 6) or lace:
                    raise ValueError("%s: a PNG of depth %d, colour type %d" % (path, depth, ctype))
            elif kind == b"IDAT":
                idat += body
            pos += 12 + n
        self.bpp = bpp = 3 if ctype == 2 else 4
        raw = zlib.decompress(idat)
        stride = self.width * bpp
        prev = bytearray(stride)
        self.rows = []
        for y in range(self.height):
            ftype = raw[y * (stride + 1)]
            line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            if ftype == 1:  # Sub: each channel a running sum (C loops: Firefox filters all rows so)
                for c in range(bpp):
                    line[c::bpp] = bytes(map((255).__and__, itertools.accumulate(line[c::bpp])))
            elif ftype == 2:  # Up
                line = bytearray((a + b) & 255 for a, b in zip(line, prev))
            elif ftype == 3:  # Average
                for i in range(stride):
                    left = line[i - bpp] if i >= bpp else 0
                    line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
            elif ftype == 4:  # Paeth
                for i in range(stride):
                    a = line[i - bpp] if i >= bpp else 0
                    b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    line[i] = (line[i] + pred) & 255
            self.rows.append(line)
            prev = line

    def pixel(self, x, y):
        return tuple(self.rows[y][x * self.bpp:x * self.bpp + 3])

    def colours(self):
        """The distinct colours of the image."""
        seen = set()
        for row in self.rows:
            seen.update(bytes(row[i:i + 3]) for i in range(0, len(row), self.bpp))
        return seen


def main():
    exe, outdir, timeout, files = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
    os.makedirs(outdir, exist_ok=True)
    started = time.monotonic()
    b = Browser(exe, outdir)
    try:
        s = open_page(b, timeout)
        print("browser started in %.2f s" % (time.monotonic() - started))
        for n, path in enumerate(files):
            began = time.monotonic()
            report, png = open_file(b, s, path, timeout)
            print("%s: %.2f s" % (path, time.monotonic() - began))
            report["file"] = os.path.abspath(path)
            with open(os.path.join(outdir, "%d.json" % n), "w") as f:
                json.dump(report, f)
            with open(os.path.join(outdir, "%d.png" % n), "wb") as f:
                f.write(png)
    finally:
        b.close()


if __name__ == "__main__":
    main()
