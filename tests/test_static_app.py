"""The static app (``thousand web build``): what the build writes, and in a real headless
Chromium at a phone's size its advisor (static/advisor.js, one more twin of the kernel's turn
DP) against the Python advice layer on random situations of every family, and a whole
offline session: install, the host gone, a two-player game of classic with exact advice,
reload, resume (screenshots in a temporary folder, or docs/screenshots/ with
THOUSAND_SCREENSHOTS=1)."""

from __future__ import annotations

import functools
import http.server
import json
import random
import threading

import pytest
from click.testing import CliRunner

from thousand.advice.policy import advice_json
from thousand.cli import main
from thousand.play.game import Advisors, Game
from thousand.rules.ruleset import load_ruleset
from thousand.web.static_build import MARK, BuildError, build_static

# the presets the browser test builds: each family's (1000: classic, street, admission, plain;
# Farkle: farkle, zilch; Pig), at least 200 decisions per family
FAMILIES = {
    "1000": ("classic", "street", "admission", "plain"),
    "farkle": ("farkle", "zilch"),
    "pig": ("pig",),
    "equal turns": ("six-dice",),  # its last turns (the seat that plays last in the round): exact with no table
}
DECISIONS = 210  # per family, spread over its presets


def test_the_build_writes_an_app_that_any_static_host_serves(tmp_path):
    out = tmp_path / "app"
    summary = build_static(out, ["pig", "six-dice"])
    # six-dice plays equal turns, and its duel does not fit: its last turns alone are advised
    assert summary["presets"] == {"pig": "duel", "six-dice": "last turn"}
    html = (out / "index.html").read_text()
    assert 'data-static="1"' in html and 'src="static/advisor.js"' in html and 'src="/' not in html
    worker = (out / "sw.js").read_text()
    assert "__VERSION__" not in worker and summary["version"] in worker
    kept = json.loads(worker.split("const STATIC_FILES = ")[1].split(";\n")[0])
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    # the worker keeps every file of the app (not itself, nor the build's own summary, nor the
    # data's script twins, which serve the app opened from the folder itself)
    twins = [f for f in files if f.startswith("data/") and f.endswith(".js")]
    assert sorted(kept) == sorted(["./", *(f for f in files if f not in ("sw.js", MARK, *twins))])
    assert sorted(twins) == sorted(f + ".js" for f in kept if f.startswith("data/"))
    pig = json.loads((out / "data" / "rules" / "pig.json").read_text())
    rs = load_ruleset("pig")
    n = len(pig["states"]) // 9
    blocks = sorted((out / pig["table"]["blocks"]).glob("*.bin"), key=lambda p: int(p.stem))
    assert pig["hash"] == rs.hash and sum(b.stat().st_size for b in blocks) == 8 * n * n
    assert blocks[0].stat().st_size == 8 * n * min(n, pig["table"]["rows_per_block"])
    assert set(pig["plans"]) == {"en", "ru"} and pig["plans"]["en"]["2"]["method"] == "duel"
    assert "last turn" in json.loads((out / "data" / "rules" / "six-dice.json").read_text())["why"]["en"]
    words = json.loads((out / "data" / "strings.ru.json").read_text())["words"]
    assert words["adv_stop"] != "stop" and words["stop"] != "Stop"  # translated at the build
    # built again over itself: replaced; a folder holding anything else is refused untouched
    assert build_static(out, ["pig", "pig"])["presets"] == {"pig": "duel"}
    assert not (out / "data" / "rules" / "six-dice.json").exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match="not empty"):
        build_static(other, ["pig"])
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


def test_the_command_builds_and_refuses_in_one_line(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["web", "build", str(tmp_path / "app"), "--rules", "pig", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["presets"] == {"pig": "duel"}
    bad = runner.invoke(main, ["web", "build", str(tmp_path / "b"), "--rules", "no-such-rules"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1
    assert not (tmp_path / "b").exists()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("")
    busy = runner.invoke(main, ["web", "build", str(tmp_path / "c"), "--rules", "pig"])
    assert busy.exit_code == 2 and "not empty" in busy.output


# ---------------------------------------------------------------------------- in the browser


def _host(folder):
    """A plain static host for ``folder`` (no server of ours: what any host does); yields its
    address, then goes away."""
    handler = functools.partial(_Quiet, directory=str(folder))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    th.join(10)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _browser_kit():
    pytest.importorskip("selenium.webdriver")
    import test_web_browser as kit  # skips without a browser (fails under CI)

    return kit


def last_seat_last_turn(g: Game) -> bool:
    """A last turn of an equal-turns round with nobody after it."""
    return bool(g.finished) and g.current == len(g.names) - 1


def random_decisions(name: str, count: int, seed: int) -> list[dict]:
    """Decisions met in games of ``name`` played at random by the Python engine (two to four
    players): each the game's log and names, and the Python advice layer's answer as the web
    server gives it (no lookahead over the opponents' turns, which neither computes); with
    equal turns, those of :func:`last_seat_last_turn` only."""
    rs = load_ruleset(name)
    rnd = random.Random(seed)
    advisors = Advisors(rs, on_request=True, chances=False, lookahead=False)
    out = []
    game = 0
    while len(out) < count:
        players = (2, 3, 2, 4)[game % 4]
        game += 1
        names = [f"p{k}" for k in range(players)]
        g = Game(rs, names)
        taken = 0
        for _step in range(600):
            if g.over or len(out) >= count or taken >= 30:
                break
            tr = g.turn
            asked = last_seat_last_turn(g) if rs.equal_turns else rnd.random() < 0.25
            if asked:  # a decision here (before a roll, or with the roll showing)
                out.append({"log": list(g.log), "names": names, "want": advice_json(advisors.advice(g))[-1]})
                taken += 1
            if tr.roll is not None:
                g.submit("keep " + ",".join(map(str, rnd.choice(tr.options)[1])))
            elif g.engine.can_stop(tr.state) and rnd.random() < 0.4:
                g.submit("stop")
            else:
                g.submit("roll " + ",".join(str(rnd.randint(1, rs.faces)) for _k in range(tr.dice)))
    return out


ASK = """
const [name, cases, done] = arguments;
(async () => {
  const data = await (await fetch(`data/rules/${name}.json`)).json();
  const block = (k) => fetch(`${data.table.blocks}${k}.bin`).then((r) => r.arrayBuffer());
  const words = (await (await fetch("data/strings.en.json")).json()).words;
  const adv = new ThousandAdvisor.Advisor(data, data.table ? block : null);
  const out = [];
  for (const [log, names] of cases) {
    const g = new ThousandRules.Game(data.engine, names);
    g.replay(log);
    try { out.push(await adv.advise(g, words, "en")); } catch (e) { out.push({ error: String(e) }); }
  }
  return out;
})().then(done, (e) => done({ error: String(e) }));
"""


def _key(option: dict) -> tuple:
    return (option["action"], tuple(option.get("keep", ())), option["label"])


def test_the_static_apps_advice_is_the_python_advisors(tmp_path):
    """At least 200 decisions per family, from random games of two to four players: the same
    method and heading, the same options in the same words, every value within 1e-9, and the
    best option of one is the best of the other (or worth the same within 1e-9)."""
    kit = _browser_kit()
    names = [n for family in FAMILIES.values() for n in family]
    build_static(tmp_path / "app", names)
    host = _host(tmp_path / "app")
    address = next(host)
    b = kit._chrome()
    try:
        b.set_script_timeout(300)
        b.get(address + "/")
        kit.WebDriverWait(b, 20).until(lambda d: d.execute_script("return typeof ThousandAdvisor !== 'undefined'"))
        checked = {}
        for family, presets in FAMILIES.items():
            for k, name in enumerate(presets):
                count = -(-DECISIONS // len(presets))
                cases = random_decisions(name, count, seed=1000 + k)
                got = b.execute_async_script(ASK, name, [[c["log"], c["names"]] for c in cases])
                assert not isinstance(got, dict), got
                for case, js in zip(cases, got):
                    want, where = case["want"], f"{name}, {len(case['names'])} players, after {case['log'][-4:]}"
                    assert "error" not in js, (where, js)
                    value = want["value"]
                    same = (want["method_id"], want["method"], value)
                    assert (js["method_id"], js["method"], js["value"]) == same, where
                    assert js["note"] == want["note"], where  # what the rules say of this turn, in the same words
                    mine = {_key(o): o[value] for o in js["options"]}
                    theirs = {_key(o): o[value] for o in want["options"]}
                    assert mine.keys() == theirs.keys(), where
                    for key, v in theirs.items():
                        assert abs(mine[key] - v) <= 1e-9, (where, key, mine[key], v)
                    best = want["options"][0][value]
                    assert abs(theirs[_key(js["options"][0])] - best) <= 1e-9, where
                    checked[family] = checked.get(family, 0) + 1
        assert all(checked[f] >= 200 for f in FAMILIES), checked
    finally:
        b.quit()
        next(host, None)


def test_the_static_app_installs_and_plays_a_whole_session_offline(tmp_path):
    """Opened once from a static host, the app keeps every file on the phone; with the host
    gone it starts a two-player game of classic, keeps score, gives the exact advice (the turn
    solved in the browser), undoes, and after a reload resumes the game where it was."""
    kit = _browser_kit()
    out = kit.shots(tmp_path)
    build_static(tmp_path / "app", ["classic", "pig"])
    host = _host(tmp_path / "app")
    address = next(host)
    b = kit._chrome()
    wait = kit.WebDriverWait(b, 60)
    By, EC = kit.By, kit.EC

    def css(sel):
        return b.find_element(By.CSS_SELECTOR, sel)

    def where(text):
        wait.until(EC.text_to_be_present_in_element((By.ID, "where"), text))

    try:
        b.get(address + "/")
        b.execute_script("localStorage.setItem('thousand.lang', 'en')")
        b.get(address + "/")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#rules option[value=classic]")))
        kit._controlled(wait)
        # installed: the manifest is there and every file of the app is kept (the tables too)
        assert b.execute_script("return document.querySelector('link[rel=manifest]').href").endswith(
            "/manifest.webmanifest"
        )
        kept = b.execute_async_script(
            "const done = arguments[0];"
            "caches.keys().then(async (ks) => { let n = 0;"
            " for (const k of ks) n += (await (await caches.open(k)).keys()).length; done(n); });"
        )
        worker = (tmp_path / "app" / "sw.js").read_text()
        assert kept == len(json.loads(worker.split("const STATIC_FILES = ")[1].split(";\n")[0]))
        assert not b.find_element(By.ID, "share").is_displayed()  # no server to share through
        b.save_screenshot(str(out / "static-install.png"))

        next(host, None)  # the host goes away: the network is off for this app
        b.refresh()
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#rules option[value=classic]")))
        assert css("#static-ready").text.startswith("Kept on this phone: the app keeps score")
        css("#rules option[value=classic]").click()
        rows = b.find_elements(By.CSS_SELECTOR, "#names .name")
        rows[-1].find_element(By.TAG_NAME, "button").click()  # two players
        for field, name in zip(b.find_elements(By.CSS_SELECTOR, "#names input"), ("Ann", "Bob")):
            field.send_keys(name)
        b.save_screenshot(str(out / "static-offline.png"))
        css("#start-game").click()
        wait.until(lambda d: "#game=" in d.current_url)
        where("Ann to play")
        kit._tap_roll(b, wait, (1, 1, 1, 2, 3), "turn total 100")
        css("#advice-btn").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#advice .bar-row")) == 2)
        head = css("#advice h3").text
        assert head.startswith(("Stop — ", "Roll 2 — ")) and "% to win" in head, head
        css("#advice details summary").click()
        assert css("#advice details p").text == "Exact: the best play against Bob, who also plays their best."
        b.execute_script("window.scrollTo(0, document.getElementById('where').offsetTop - 70)")
        b.save_screenshot(str(out / "static-advice.png"))
        css("#stop").click()
        where("Bob to play")
        kit._tap_roll(b, wait, (5, 2, 2, 3, 4), "turn total 5")
        css("#undo").click()
        where("Bob to play")
        assert css("#where").text == "Bob to play"
        kit._tap_roll(b, wait, (1, 5, 2, 3, 3), "turn total 15")

        b.refresh()  # still offline: the game comes back from this phone
        where("Bob: turn total 15")
        assert kit._scores(b) == ["100", "0"]
        css("#advice-btn").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#advice .bar-row"))
        assert "% to win" in css("#advice h3").text
        b.save_screenshot(str(out / "static-resume.png"))
        b.get(b.current_url.split("#")[0])
        # the start page lists the game kept on this phone: roll, stop, roll (the undo took one back)
        wait.until(EC.text_to_be_present_in_element((By.ID, "saved"), "classic: Ann, Bob (3)"))
    finally:
        b.quit()
        next(host, None)


def test_the_app_opens_from_its_folder_with_no_host(tmp_path):
    """``index.html`` opened from the disk (``file://``: no host, no service worker, no fetch):
    the data come from their script twins; a game of Pig for two is played and advised."""
    kit = _browser_kit()
    build_static(tmp_path / "app", ["pig"])
    b = kit._chrome()
    wait = kit.WebDriverWait(b, 30)
    By, EC = kit.By, kit.EC
    try:
        page = (tmp_path / "app" / "index.html").as_uri()
        b.get(page)
        b.execute_script("localStorage.setItem('thousand.lang', 'en')")
        b.get(page)
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#rules option[value=pig]")))
        b.find_elements(By.CSS_SELECTOR, "#names .name")[-1].find_element(By.TAG_NAME, "button").click()
        for field, name in zip(b.find_elements(By.CSS_SELECTOR, "#names input"), ("Ann", "Bob")):
            field.send_keys(name)
        b.find_element(By.ID, "start-game").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "where"), "Ann to play"))
        kit._tap_roll(b, wait, (5,), "turn total 5")
        b.find_element(By.ID, "advice-btn").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#advice .bar-row")) == 2)
        b.find_element(By.CSS_SELECTOR, "#advice details summary").click()
        assert b.find_element(By.CSS_SELECTOR, "#advice details p").text.startswith("Exact: the best play against Bob")
        assert "% to win" in b.find_element(By.CSS_SELECTOR, "#advice h3").text
    finally:
        b.quit()
