#!/usr/bin/env python3
"""Render numaprobe report pages in headless chromium and check them.

For each NAME=PATH given: load the page twice (JavaScript on, then off) in
a fresh chromium driven over the DevTools protocol, and fail on a missing
section or picture, a console error, a request to anything but the page
itself (file:, data:, about:), or a page wider than the window. Full-page
and per-section screenshots go to --out (the test's artefacts).
Used by scripts/browser-test; needs chromium and python3-websocket.
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
WIDTH, HEIGHT = 1400, 900
SECTIONS = ["machine", "topology", "matrices", "interconnect", "findings", "study",
            "rankings", "binding"]
# Pictures every report of that kind must show.
REQUIRED = {
    "live": ["section#topology svg.topology", "section#matrices table.heat",
             "section#study svg"],
    "fixture": ["section#topology svg.topology", "section#matrices table.heat",
                "section#interconnect svg", "section#rankings svg.ranking"],
}
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


def check_page(name, path, js, out):
    """Load one page; return the problems found (empty when it passes)."""
    problems = []
    profile = tempfile.mkdtemp(prefix="numaprobe-chromium-")
    proc, ws_url = start_chromium(profile)
    mode = "js" if js else "nojs"
    try:
        tab = Tab(ws_url)
        for domain in ("Page", "Network", "Runtime", "Log", "DOM"):
            tab.call(f"{domain}.enable")
        tab.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
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
        for sid in SECTIONS:
            node = tab.call("DOM.querySelector", nodeId=root, selector=f"section#{sid}")["nodeId"]
            if not node:
                problems.append(f"section #{sid} missing")
                continue
            h2 = tab.call("DOM.querySelector", nodeId=node, selector="h2")["nodeId"]
            if not h2:
                problems.append(f"section #{sid} has no heading")
            html = tab.call("DOM.getOuterHTML", nodeId=node)["outerHTML"]
            if len(html) < 80:
                problems.append(f"section #{sid} is empty")
            box = tab.call("DOM.getBoxModel", nodeId=node)["model"]
            q = box["border"]
            clip = {"x": q[0], "y": q[1], "width": q[2] - q[0],
                    "height": min(q[5] - q[1], MAX_SHOT_HEIGHT)}
            if clip["height"] < 20:
                problems.append(f"section #{sid} is not drawn (height {clip['height']})")
            elif js:
                shot(tab, os.path.join(out, f"{name}-{sid}.png"), clip)
        for sel in REQUIRED.get(name, []):
            if not tab.call("DOM.querySelector", nodeId=root, selector=sel)["nodeId"]:
                problems.append(f"nothing matches {sel}")

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
    return [f"{name} (JavaScript {'on' if js else 'off'}): {p}" for p in problems]


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
            failed += 2
            continue
        for js in (True, False):
            found = check_page(name, path, js, a.out)
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
