#!/usr/bin/env python3
"""Render numaprobe report pages in headless chromium and check them.

For each NAME=PATH given: load the page in a fresh chromium driven over the
DevTools protocol at 1400 and 800 px wide (and once more with JavaScript
off), and fail on:
  - a missing section or picture, a console error, a request to anything
    but the page itself (file:, data:, about:), a page wider than the window;
  - a chart (every picture but the topology drawing) without a viewBox or
    drawn past its box or the window: charts scale to the page width;
  - a matrix cut: the last column of every heatmap must be reachable, i.e.
    its scroll container scrolls (or the table fits) and, scrolled to the
    end, the last header cell lies inside the container;
  - a word broken inside a table cell ("tie r", "task set"): every word of
    every header and cell is drawn on one line;
  - a figure drawn apart from its unit ("28.5" ending a line, "%" starting
    the next), outside code;
  - a heading repeated by the heading right after it ("System peak" above
    "System peak: every allowed CPU ...");
  - a "partial" banner when the folder's run.json says `complete: true`;
  - an empty-section block: a section holding nothing but its heading and
    a note.
Full-page, per-section and scrolled-to-the-end matrix screenshots go to
--out (the test's artefacts). Used by scripts/browser-test; needs chromium
and python3-websocket.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--mute-audio", "--remote-debugging-port=0",
]
WIDTHS = (1400, 800)
HEIGHT = 900
# Sections each kind of report must draw (with data); the others may be
# named on the one "Nothing in this folder for" line.
SECTIONS = {
    "live": ["machine", "topology", "matrices", "peak", "findings", "study", "loaded",
             "sweep", "binding"],
    "fixture": ["machine", "topology", "matrices", "interconnect", "findings",
                "rankings", "binding"],
}
# Pictures every report of that kind must show (and, for the fixture's 64
# nodes, the interconnect picture it must not draw). Between them the two
# reports hold every chart the report can draw (loaded latency, sweep,
# study, interconnect, rankings), each named, so that each is checked at
# both widths.
REQUIRED = {
    "live": ["section#topology svg.topology", "section#matrices table.heat",
             "section#study svg", "section#loaded svg", "section#sweep svg"],
    "fixture": ["section#topology svg.topology", "section#matrices table.heat",
                "section#interconnect svg", "section#rankings svg.ranking", "#absent"],
}
# Sentences the page must hold: the 64-node inference is not drawn and
# the page says why (the measured 4-node matrix beside it is drawn).
TEXTS = {
    "fixture": ["No interconnect picture: 64 nodes and"],
}
# A word longer than this may break anywhere (the page's LONG_WORD): no
# column can be as wide as a 64-place OMP_PLACES list.
LONG_WORD = 40

# Geometry checks, run in the page (the report itself has no script).
LAYOUT_JS = r"""
(() => {
  const out = {cut: [], broken: [], split: [], repeated: [], empty: [], banner: [], heat: 0,
               charts: [], chart: 0};
  // Charts: every picture but the topology drawing (which scrolls, as a
  // 256-CPU machine cannot be read scaled down) has a viewBox and is drawn
  // whole inside the window: scaled to the page, never cut at its right.
  document.querySelectorAll('section svg:not(.topology)').forEach((g, i) => {
    if (g.parentElement.closest('svg')) return;
    out.chart++;
    const name = ((g.closest('section') || {}).id || '?') + ' chart ' + i;
    if (!g.getAttribute('viewBox')) out.charts.push(name + ': no viewBox, so it cannot scale');
    const r = g.getBoundingClientRect(), vw = document.documentElement.clientWidth;
    const box = g.parentElement.getBoundingClientRect();
    if (r.width < 1) out.charts.push(name + ': not drawn');
    if (r.right > vw + 1 || r.right > box.right + 1)
      out.charts.push(name + ': ends at ' + Math.round(r.right) + ' px, past its box (' +
        Math.round(box.right) + ') or the window (' + vw + ')');
  });
  // Matrices: the last column reachable inside a scroll container.
  document.querySelectorAll('table.heat').forEach((t, i) => {
    out.heat++;
    const box = t.parentElement;
    const last = t.querySelector('thead tr th:last-child');
    const name = (t.closest('section') || {}).id + ' heatmap ' + i + ' (' +
      (last ? last.textContent : '?') + ' last)';
    if (!last) { out.cut.push(name + ': no header row'); return; }
    const ox = getComputedStyle(box).overflowX;
    const wider = t.scrollWidth > box.clientWidth + 1;
    if (wider && !(ox === 'auto' || ox === 'scroll')) {
      out.cut.push(name + ': wider than its box and the box does not scroll (overflow-x ' + ox + ')');
      return;
    }
    box.scrollLeft = box.scrollWidth;
    const b = box.getBoundingClientRect(), c = last.getBoundingClientRect();
    if (c.right > b.right + 1 || c.left < b.left - 1)
      out.cut.push(name + ': scrolled to the end, the last column is at ' +
        Math.round(c.left) + '-' + Math.round(c.right) + ' px, the box ends at ' + Math.round(b.right));
    const vw = document.documentElement.clientWidth;
    if (b.right > vw + 1) out.cut.push(name + ': its box ends at ' + Math.round(b.right) + ' px, past the window (' + vw + ')');
  });
  // Words broken inside cells: a word whose range is drawn on two lines.
  const range = document.createRange();
  document.querySelectorAll('th, td').forEach(cell => {
    if (out.broken.length > 20) return;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const re = /\S+/g;
      let m;
      while ((m = re.exec(n.data)) !== null) {
        if (m[0].length < 2 || m[0].length > LONG_WORD) continue;
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const tops = new Set();
        for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
        if (tops.size > 1) {
          out.broken.push('"' + m[0].slice(0, 60) + '" in a ' + cell.tagName.toLowerCase() +
            ' of ' + ((cell.closest('section') || {}).id || '?') + ' drawn on ' + tops.size + ' lines');
          return;
        }
      }
    }
  });
  // A figure and its unit drawn on two lines ("28.5" ending one line, "%"
  // starting the next), in prose and cells alike; code is left as typed.
  const unit = /\d[ \u00a0]+(%|ns|us|\u00b5s|ms|s|B|KiB|MiB|GiB|TiB|GB|MB\/s|GB\/s|Mops\/s|MHz|GHz|W)(?=[\s,;.):]|$)/g;
  const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = texts.nextNode(); n && out.split.length <= 20; n = texts.nextNode()) {
    if (n.parentElement.closest('code, pre, svg, script, style')) continue;
    let m;
    unit.lastIndex = 0;
    while ((m = unit.exec(n.data)) !== null) {
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const tops = new Set();
      for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
      if (tops.size > 1) {
        out.split.push('"' + n.data.slice(Math.max(0, m.index - 20), m.index + m[0].length) +
          '" in ' + ((n.parentElement.closest('section') || {}).id || '?'));
        break;
      }
    }
  }
  // A heading repeated by the one right after it ("System peak" above
  // "System peak: every allowed CPU ..."), the note naming the file aside.
  const own = h => [...h.childNodes].filter(c => !(c.classList && c.classList.contains('note')))
    .map(c => c.textContent).join('').trim();
  document.querySelectorAll('h2, h3').forEach(h => {
    const next = h.nextElementSibling;
    if (next && /^H[23]$/.test(next.tagName) && own(h) && own(next).startsWith(own(h)))
      out.repeated.push('"' + own(h) + '" then "' + own(next).slice(0, 80) + '"');
  });
  // Empty-section blocks: nothing but the heading and notes.
  document.querySelectorAll('section').forEach(s => {
    const rest = [...s.children].filter(e => e.tagName !== 'H2' &&
      !(e.tagName === 'P' && e.classList.contains('note')));
    if (rest.length === 0) out.empty.push(s.id + ': ' + s.textContent.trim().slice(0, 100));
  });
  document.querySelectorAll('#status, .warn').forEach(w => {
    if (/partial|incomplete/i.test(w.textContent)) out.banner.push(w.textContent.trim().slice(0, 160));
  });
  return JSON.stringify(out);
})()
"""
ALLOWED_SCHEMES = ("file:", "data:", "about:")
MAX_SHOT_HEIGHT = 14000


class Tab:
    """One page target over the DevTools websocket: calls and events."""

    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def _recv(self, deadline):
        self.ws.settimeout(max(0.1, deadline - time.time()))
        return json.loads(self.ws.recv())

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        deadline = time.time() + 30
        while True:
            msg = self._recv(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait(self, method, timeout=30):
        for i, e in enumerate(self.events):
            if e["method"] == method:
                return self.events.pop(i)
        deadline = time.time() + timeout
        while True:
            msg = self._recv(deadline)
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)

    def drain(self, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                msg = self._recv(deadline)
            except websocket.WebSocketTimeoutException:
                break
            if "method" in msg:
                self.events.append(msg)


def start_chromium(profile):
    exe = shutil.which("chromium")
    if not exe:
        sys.exit("browser-test: chromium is not installed")
    proc = subprocess.Popen(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(profile, "DevToolsActivePort")
    deadline = time.time() + 30
    while not os.path.exists(port_file):
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            sys.exit("browser-test: chromium did not start its DevTools endpoint")
        time.sleep(0.1)
    time.sleep(0.2)
    port = open(port_file).read().split()[0]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
        pages = [t for t in json.load(r) if t.get("type") == "page"]
    return proc, pages[0]["webSocketDebuggerUrl"]


def shot(tab, path, clip):
    data = tab.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                    clip=dict(clip, scale=1))["data"]
    with open(path, "wb") as f:
        f.write(base64.b64decode(data))


def run_complete(path):
    """run.json's `complete` beside the page, or None without one."""
    run = os.path.join(os.path.dirname(path), "run.json")
    try:
        with open(run) as f:
            return json.load(f).get("complete")
    except (OSError, ValueError):
        return None


def check_page(name, path, js, width, out):
    """Load one page; return the problems found (empty when it passes)."""
    problems = []
    profile = tempfile.mkdtemp(prefix="numaprobe-chromium-")
    proc, ws_url = start_chromium(profile)
    mode = f"{width}" if js else f"{width}-nojs"
    try:
        tab = Tab(ws_url)
        for domain in ("Page", "Network", "Runtime", "Log", "DOM"):
            tab.call(f"{domain}.enable")
        tab.call("Emulation.setDeviceMetricsOverride", width=width, height=HEIGHT,
                 deviceScaleFactor=1, mobile=False)
        if not js:
            tab.call("Emulation.setScriptExecutionDisabled", value=True)
        url = "file://" + os.path.abspath(path)
        tab.call("Page.navigate", url=url)
        tab.wait("Page.loadEventFired")
        tab.drain(1.0)

        for e in tab.events:
            m, p = e["method"], e.get("params", {})
            if m == "Network.requestWillBeSent":
                u = p["request"]["url"]
                if not u.startswith(ALLOWED_SCHEMES):
                    problems.append(f"external request: {u}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                problems.append(f"console error: {args}")
            elif m == "Runtime.exceptionThrown":
                problems.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                problems.append(f"log error: {p['entry'].get('text')} {p['entry'].get('url', '')}")

        root = tab.call("DOM.getDocument", depth=-1)["root"]["nodeId"]
        for sid in SECTIONS.get(name, []):
            node = tab.call("DOM.querySelector", nodeId=root, selector=f"section#{sid}")["nodeId"]
            if not node:
                problems.append(f"section #{sid} missing")
                continue
            h2 = tab.call("DOM.querySelector", nodeId=node, selector="h2")["nodeId"]
            if not h2:
                problems.append(f"section #{sid} has no heading")
            box = tab.call("DOM.getBoxModel", nodeId=node)["model"]
            q = box["border"]
            clip = {"x": q[0], "y": q[1], "width": q[2] - q[0],
                    "height": min(q[5] - q[1], MAX_SHOT_HEIGHT)}
            if clip["height"] < 20:
                problems.append(f"section #{sid} is not drawn (height {clip['height']})")
            elif js:
                shot(tab, os.path.join(out, f"{name}-{width}-{sid}.png"), clip)
        for sel in REQUIRED.get(name, []):
            if not tab.call("DOM.querySelector", nodeId=root, selector=sel)["nodeId"]:
                problems.append(f"nothing matches {sel}")
        text = tab.call("DOM.getOuterHTML", nodeId=root)["outerHTML"]
        for t in TEXTS.get(name, []):
            if t not in text:
                problems.append(f"the page does not say: {t}")

        if js:
            res = tab.call("Runtime.evaluate", returnByValue=True,
                           expression=LAYOUT_JS.replace("LONG_WORD", str(LONG_WORD)))
            if "exceptionDetails" in res:
                problems.append(f"layout check failed: {res['exceptionDetails'].get('text')}")
            else:
                lay = json.loads(res["result"]["value"])
                problems += [f"matrix cut: {c}" for c in lay["cut"]]
                problems += [f"word broken: {b}" for b in lay["broken"]]
                problems += [f"figure split from its unit: {u}" for u in lay["split"]]
                problems += [f"heading repeated: {h}" for h in lay["repeated"]]
                problems += [f"empty-section block: {e}" for e in lay["empty"]]
                problems += [f"chart cut: {c}" for c in lay["charts"]]
                if name == "live" and lay["chart"] < 3:
                    problems.append(f"{lay['chart']} charts drawn (loaded latency, sweep and "
                                    "study at least)")
                if run_complete(path) is True:
                    problems += [f"banner on a complete run: {b}" for b in lay["banner"]]
                # The heatmaps scrolled to their last column, as evidence.
                boxes = tab.call("DOM.querySelectorAll", nodeId=root,
                                 selector="div.scroll:has(> table.heat)")["nodeIds"]
                for i, node in enumerate(boxes[:3]):
                    q = tab.call("DOM.getBoxModel", nodeId=node)["model"]["border"]
                    clip = {"x": q[0], "y": q[1], "width": q[2] - q[0],
                            "height": min(q[5] - q[1], MAX_SHOT_HEIGHT)}
                    if clip["height"] >= 20:
                        shot(tab, os.path.join(out, f"{name}-{width}-heatmap{i}-end.png"), clip)

        metrics = tab.call("Page.getLayoutMetrics")
        content = metrics["cssContentSize"]
        view = metrics["cssLayoutViewport"]
        if content["width"] > view["clientWidth"] + 1:
            problems.append(
                f"page wider than the window: {content['width']:.0f} px > {view['clientWidth']} px")
        shot(tab, os.path.join(out, f"{name}-{mode}-full.png"),
             {"x": 0, "y": 0, "width": view["clientWidth"],
              "height": min(content["height"], MAX_SHOT_HEIGHT)})
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
    return [f"{name} at {width} px (JavaScript {'on' if js else 'off'}): {p}" for p in problems]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("pages", nargs="+", help="NAME=PATH of a report.html")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    problems = []
    passed = failed = 0
    for spec in a.pages:
        name, path = spec.split("=", 1)
        if not os.path.isfile(path):
            problems.append(f"{name}: {path} does not exist")
            failed += len(WIDTHS) + 1
            continue
        for width, js in [(w, True) for w in WIDTHS] + [(WIDTHS[0], False)]:
            found = check_page(name, path, js, width, a.out)
            problems += found
            if found:
                failed += 1
            else:
                passed += 1
    shots = sorted(f for f in os.listdir(a.out) if f.endswith(".png"))
    print(f"browser-test: {len(shots)} screenshots in {a.out}/")
    for p in problems:
        print(f"browser-test: FAIL {p}", file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
