"""What the static app (``thousand web build``) costs a phone: the download, and the time to
the first advice on a cold start with the network off, in headless Chromium at 360 x 780.

The app is built for ``--rules`` (default classic), served by a plain static host and opened
once in a fresh browser profile (the service worker keeps every file; a two-player game with
a decision to advise is started). Then the host goes away, the browser is quit, and for each
CPU slowdown (1x, the machine as it is, beside the target's 4x, Chromium's
``Emulation.setCPUThrottlingRate``) a new browser on the same profile, with the network
emulated off, opens the game and asks for advice: the time from the start of the navigation
to the game drawn, and to the advice drawn when Advice is tapped the moment the game shows (the
table read from the phone's cache, the turn solved in the browser), the median of ``--runs``
cold starts.

    python bench/bench_static.py [--rules classic] [--runs 5] [--json F]

Targets (issue 55): the download under 15 MB, the first advice under one second at 4x.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

from thousand.web.static_build import build_static

WIDTH, HEIGHT = 360, 780
TARGET_MB, TARGET_S = 15.0, 1.0


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def chrome(profile: Path) -> webdriver.Chrome:
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--user-data-dir={profile}",
        "--lang=en-US",
    ):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=opts)
    drv.set_page_load_timeout(60)
    drv.set_script_timeout(60)
    return drv


# put into the page before its own scripts run (CDP Page.addScriptToEvaluateOnNewDocument), so
# that nothing waits for the driver: the moment the game is drawn, Advice is tapped; the times
# (ms from the navigation's start) of the game drawn and of the advice drawn
TAP = """
window.__bench = new Promise((done) => {
  const drawn = () => document.querySelector("#where") && document.querySelector("#where").textContent.includes("Ann");
  const wait = (ok) => new Promise((res) => {
    const tick = () => (ok() ? res(performance.now()) : setTimeout(tick, 2));
    tick();
  });
  (async () => {
    const game = await wait(drawn);
    document.querySelector("#advice-btn").click();
    const advice = await wait(() => document.querySelector("#advice h3"));
    done({ game, advice, headline: document.querySelector("#advice h3").textContent });
  })().catch((e) => done({ error: String(e) }));
});
"""
MEASURE = "const done = arguments[0]; window.__bench.then(done);"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", action="append", help="a preset to build (repeat; default classic)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rules = args.rules or ["classic"]
    work = Path(tempfile.mkdtemp(prefix="thousand-static-"))
    summary = build_static(work / "app", rules)
    files = json.loads((work / "app" / "sw.js").read_text().split("const STATIC_FILES = ")[1].split(";\n")[0])
    download = (
        sum((work / "app" / f).stat().st_size for f in files if f != "./") + (work / "app" / "sw.js").stat().st_size
    )
    print(
        f"rules: {', '.join(rules)}; the download (every file the phone keeps): {download / 2**20:.2f} MB "
        f"(target < {TARGET_MB:.0f} MB); duel tables {sum(a == 'duel' for a in summary['presets'].values())}"
    )

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(work / "app")))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    address = f"http://127.0.0.1:{srv.server_address[1]}"
    profile = work / "profile"
    b = chrome(profile)
    try:  # the first visit: install, and a game of two with Ann's first roll showing
        b.get(address + "/")
        b.execute_script("localStorage.setItem('thousand.lang', 'en')")
        b.get(address + "/")
        WebDriverWait(b, 60).until(lambda d: d.execute_script("return !!navigator.serviceWorker.controller"))
        gid = b.execute_async_script(
            "const [rules, done] = arguments;"
            "fetch('data/rules/' + rules + '.json').then(() => {"
            " const id = 'a1b2c3d4e5f60718';"
            " localStorage.setItem('thousand.static.games.' + id, JSON.stringify({id, rules,"
            "  names: ['Ann', 'Bob'], log: ['roll 1,1,5,2,3'], changed: new Date().toISOString()}));"
            " localStorage.setItem('thousand.static.games', JSON.stringify([id])); done(id); });",
            rules[0],
        )
    finally:
        b.quit()
    srv.shutdown()
    srv.server_close()

    results = {"rules": rules, "download_bytes": download, "runs": {}}
    for rate in (1, 4):
        games, advices = [], []
        for _run in range(args.runs):
            b = chrome(profile)
            try:
                b.execute_cdp_cmd("Network.enable", {})
                b.execute_cdp_cmd(
                    "Network.emulateNetworkConditions",
                    {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
                )
                b.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": rate})
                b.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TAP})
                b.get(f"{address}/#game={gid}")
                got = b.execute_async_script(MEASURE)
            finally:
                b.quit()
            if "error" in got:
                sys.exit(f"the app failed offline: {got['error']}")
            games.append(got["game"] / 1000)
            advices.append(got["advice"] / 1000)
        g, a = statistics.median(games), statistics.median(advices)
        results["runs"][str(rate)] = {"game_s": games, "advice_s": advices}
        print(
            f"CPU {rate}x slower, network off, cold start: game drawn {g:.3f} s, first advice {a:.3f} s "
            f"(median of {args.runs}; all {', '.join(f'{v:.3f}' for v in advices)})"
            + (f"; target < {TARGET_S:.0f} s" if rate == 4 else "")
        )
    print(f"advice shown: {got['headline']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
