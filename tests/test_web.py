"""The web API (`thousand serve`) through a test client on httpx (tests/webclient.py):
every endpoint, the same game as `thousand play`, bad input answered with a 4xx and one line (never a
traceback, never a change to a saved game), the language per request, saves that survive
a restart of the server, and requests to one game serialised."""

from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("starlette")
from webclient import AppClient  # noqa: E402

from thousand.play import Game  # noqa: E402
from thousand.rules import load_ruleset  # noqa: E402
from thousand.web.app import MAX_BODY, create_app  # noqa: E402


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "games"


@pytest.fixture
def client(folder):
    with AppClient(create_app(folder), raise_server_exceptions=False) as c:
        yield c


def new_game(client, rules="classic", players=("Ann", "Bob", "Cat"), **kw):
    r = client.post("/api/games", json={"rules": rules, "players": list(players), **kw})
    assert r.status_code == 201, r.text
    return r.json()


def entry(client, gid, text, status=200):
    r = client.post(f"/api/games/{gid}/entry", json={"entry": text})
    assert r.status_code == status, r.text
    return r.json()


def saved(folder, gid) -> bytes:
    return (folder / f"{gid}.json").read_bytes()


def one_line_error(r, status):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and body["error"] and "\n" not in body["error"]
    assert "Traceback" not in body["error"]
    return body["error"]


def test_presets_and_the_page(client):
    names = [p["name"] for p in client.get("/api/presets").json()]
    assert "classic" in names and "pig" in names and "poker" not in names
    page = client.get("/")
    # relative paths: the same page is the static app, which a host may serve from any folder
    assert page.status_code == 200 and '"static/app.js"' in page.text
    for asset in ("/static/app.js", "/static/app.css"):
        r = client.get(asset)
        assert r.status_code == 200 and len(r.content) > 1000
    # everything the page loads is served here: no other host is named
    assert "http" not in page.text.replace("http-equiv", "")
    assert "https://" not in client.get("/static/app.js").text


def test_the_page_installs_manifest_icons_and_service_worker(client):
    """The manifest names icons the server has, of the sizes it says; the service worker is
    served from the root (its scope is the whole page), named after the static files."""
    import struct

    m = client.get("/manifest.webmanifest")
    assert m.status_code == 200 and m.headers["content-type"].startswith("application/manifest+json")
    man = m.json()
    assert man["start_url"] == "./" and man["display"] == "standalone"
    for icon in man["icons"]:
        r = client.get("/" + icon["src"])  # relative to the manifest, which is at the root
        assert r.status_code == 200 and r.content[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = struct.unpack(">II", r.content[16:24])
        assert icon["sizes"] == f"{w}x{h}"
    sw = client.get("/sw.js")
    assert sw.status_code == 200 and "javascript" in sw.headers["content-type"]
    assert "__VERSION__" not in sw.text and "thousand-shell-" in sw.text
    page = client.get("/").text
    assert 'rel="manifest"' in page and '"manifest.webmanifest"' in page
    # every file the worker keeps for the page is served
    for path in ("/", "/static/app.js", "/static/advisor.js", "/static/app.css"):
        assert f'"{path}"' in sw.text and client.get(path).status_code == 200


def test_the_winner_is_shown_with_the_winning_total(client):
    gid = new_game(client, rules="pig", players=("Ann", "Bob"), overrides=["goal=10"])["id"]
    for line in ("roll 6", "roll 5", "stop"):
        state = entry(client, gid, line)
    assert state["over"] and [(p["score"], p["winner"]) for p in state["players"]] == [(11, True), (0, False)]


def test_a_game_is_the_scorekeepers_game(client, folder):
    g = new_game(client)
    gid = g["id"]
    assert [p["name"] for p in g["players"]] == ["Ann", "Bob", "Cat"] and g["players"][0]["to_move"]
    assert g["turn"]["dice"] == 5 and not g["turn"]["can_stop"]
    lines = ["roll 1,1,1,2,3", "stop", "roll 2,3,4,6,6", "roll 1,5,5,2,3"]
    for line in lines:
        state = entry(client, gid, line)
    # the same entries through the scorekeeper of `thousand play`
    ref = Game(load_ruleset("classic"), ["Ann", "Bob", "Cat"], "classic")
    for line in lines:
        ref.submit(line)
    assert state["log"] == ref.log
    assert [p["score"] for p in state["players"]] == [s.score for s in ref.states]
    assert [p["status"] for p in state["players"]] == [ref.status(j) for j in range(3)]
    assert state["where"] == ref.where()
    assert json.loads(saved(folder, gid))["log"] == ref.log
    assert [p["score"] for p in state["players"]] == [100, 0, 0] and state["turn"]["total"] == 20
    # undo takes the last entry back
    state = client.post(f"/api/games/{gid}/undo").json()
    assert state["turn"]["total"] == 0 and state["messages"][0] == "undone: roll 1,2,3,5,5"


def test_a_roll_with_a_choice_waits_for_the_set_aside(client):
    gid = new_game(client, rules="farkle", players=("Ann", "Bob"))["id"]
    state = entry(client, gid, "roll 1,5,2,2,3,4")
    assert state["turn"]["roll"] == [1, 2, 2, 3, 4, 5]
    keeps = sorted(o["keep"] for o in state["turn"]["options"])
    assert keeps == [[1], [1, 5], [5]]
    assert not state["turn"]["can_stop"]
    state = entry(client, gid, "keep 1")
    assert state["turn"]["roll"] is None and state["turn"]["total"] == 100 and state["turn"]["dice"] == 5


def test_roll_for_me_is_reproducible_with_a_seed(client):
    a, b = new_game(client, seed=7), new_game(client, seed=7)
    ra, rb = entry(client, a["id"], "roll"), entry(client, b["id"], "roll")
    assert ra["log"] == rb["log"] and ra["log"][0].startswith("roll ")


def test_refused_entries_change_nothing(client, folder):
    gid = new_game(client)["id"]
    entry(client, gid, "roll 1,5,2,3,3")
    before = saved(folder, gid)
    for text, status in (
        ("roll 1,1,1,1,1,1,1", 409),
        ("keep 6", 409),
        ("frob", 409),
        ("roll 0,1,2", 409),
        ("", 400),
        ("x" * 300, 400),
    ):
        one_line_error(client.post(f"/api/games/{gid}/entry", json={"entry": text}), status)
        assert saved(folder, gid) == before
    as_json = {"Content-Type": "application/json"}
    deep = b'{"entry": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    for body in (b"{not json", b"[1, 2]", b'"roll"', b"\xff\xfe", deep[: MAX_BODY - 10] + b"}"):
        one_line_error(client.post(f"/api/games/{gid}/entry", content=body, headers=as_json), 400)
        assert saved(folder, gid) == before
    one_line_error(client.post(f"/api/games/{gid}/entry", json={"entry": 5}), 400)
    one_line_error(client.post(f"/api/games/{gid}/entry", content=b"x" * (MAX_BODY + 1), headers=as_json), 413)
    assert saved(folder, gid) == before


def test_bad_games_and_unknown_ids(client, folder):
    one_line_error(client.post("/api/games", json={"rules": "nosuch", "players": ["A", "B"]}), 400)
    one_line_error(client.post("/api/games", json={"rules": "classic", "players": ["A"]}), 400)
    one_line_error(client.post("/api/games", json={"rules": "classic", "players": ["A"] * 7}), 400)
    one_line_error(client.post("/api/games", json={"rules": "classic", "players": ["A", "A"]}), 400)
    one_line_error(
        client.post("/api/games", json={"rules": "classic", "players": ["A", "B"], "overrides": ["goal=-5"]}), 400
    )
    one_line_error(client.post("/api/games", json={"rules": "poker", "players": ["A", "B"]}), 400)
    one_line_error(client.post("/api/games", json={"rules": "/etc/passwd", "players": ["A", "B"]}), 400)
    one_line_error(client.post("/api/games", json={"rules": "../x.toml", "players": ["A", "B"]}), 400)
    one_line_error(client.get("/api/games/0123456789abcdef"), 404)
    one_line_error(client.get("/api/games/..%2F..%2Fetc"), 404)
    one_line_error(client.get("/api/games/ZZZZ/advice"), 404)
    one_line_error(client.delete("/api/games/0123456789abcdef"), 404)
    one_line_error(client.get("/nosuch"), 404)
    one_line_error(client.put("/api/games"), 405)
    assert not folder.exists() or not list(folder.glob("*.json"))


def test_advice_names_its_method_and_ranks_every_option(client):
    # two players of pig: the exact duel (its table ships)
    gid = new_game(client, rules="pig", players=("Ann", "Bob"))["id"]
    entry(client, gid, "roll 4")
    r = client.get(f"/api/games/{gid}/advice")
    assert r.status_code == 200, r.text
    (part,) = r.json()["advice"]
    assert part["exact"] and part["method"].startswith("Exact:") and part["value"] == "win_probability"
    assert part["headline"].endswith("% to win") or "% to win; next best:" in part["headline"]
    values = [o["win_probability"] for o in part["options"]]
    assert {o["action"] for o in part["options"]} == {"roll", "stop"}
    assert values == sorted(values, reverse=True) and all(0 <= v <= 1 for v in values)
    # three players of classic: labelled approximations
    gid = new_game(client)["id"]
    entry(client, gid, "roll 1,5,2,3,3")
    parts = client.get(f"/api/games/{gid}/advice").json()["advice"]
    assert any(p["method"].startswith("Estimate:") and not p["exact"] and p.get("options") for p in parts)
    assert client.get(f"/api/games/{gid}/advice?lang=ru").json()["advice"][-1]["method"].startswith("Оценка")


def test_a_table_being_solved_shows_progress(folder, tmp_path):
    """A ruleset whose table is not stored: the first asks get 202 and progress, then the
    advice; the table is then stored, so a new server answers at once."""
    tables = tmp_path / "tables"
    with AppClient(create_app(folder, str(tables))) as c:
        gid = new_game(c, rules="pig", players=("A", "B"), overrides=["goal=40"])["id"]
        entry(c, gid, "roll 3")
        first = c.get(f"/api/games/{gid}/advice")
        statuses = [first.status_code]
        if first.status_code == 202:
            p = first.json()
            assert p["status"] == "solving" and p["objective"] == "duel" and p["elapsed"] >= 0
        for _k in range(600):
            r = c.get(f"/api/games/{gid}/advice")
            statuses.append(r.status_code)
            if r.status_code == 200:
                break
            threading.Event().wait(0.05)
        assert statuses[-1] == 200 and r.json()["advice"][0]["exact"]
    assert any(tables.glob("*-duel/meta.json"))
    with AppClient(create_app(folder, str(tables))) as c:
        assert c.get(f"/api/games/{gid}/advice").status_code == 200


def test_a_missing_table_is_built_when_asked_once_for_two_phones(folder, tmp_path, monkeypatch):
    """A duel too large to solve unasked (plain to 2000: 400 player states): the advice is the
    measured approximation, names no command, and offers the build; two phones asking at once
    start one solve; while it runs every advice answer is ready (the page stays usable) with
    the build's progress; then the advice is exact and nothing is left to build."""
    import thousand.web.jobs as jobs

    made = []
    real = jobs.Job.__init__

    def counted(self, *a, **kw):
        made.append(a[1])
        real(self, *a, **kw)

    monkeypatch.setattr(jobs.Job, "__init__", counted)
    tables = tmp_path / "tables"
    with AppClient(create_app(folder, str(tables)), raise_server_exceptions=False) as c:
        gid = new_game(c, rules="plain", players=("A", "B"), overrides=["goal=2000"])["id"]
        entry(c, gid, "roll 1,5,2,3,4")
        for _k in range(600):  # the race table, solved unasked (a second)
            r = c.get(f"/api/games/{gid}/advice")
            if r.status_code == 200:
                break
            threading.Event().wait(0.05)
        assert r.status_code == 200 and "`thousand" not in r.text and "thousand solve" not in r.text
        body = r.json()
        assert not any(p["exact"] for p in body["advice"])
        assert "measured" in " ".join(p["method"] for p in body["advice"])
        (b,) = body["builds"]
        assert b["objective"] == "duel" and b["job"] is None and 0 < b["seconds"][0] <= b["seconds"][1]
        one_line_error(c.post(f"/api/games/{gid}/build", json={"objective": "players5"}), 400)
        one_line_error(c.post(f"/api/games/{gid}/build", json={}), 400)
        answers = []
        phones = [
            threading.Thread(
                target=lambda: answers.append(c.post(f"/api/games/{gid}/build", json={"objective": "duel"}))
            )
            for _k in range(2)
        ]
        for t in phones:
            t.start()
        for t in phones:
            t.join()
        assert [a.status_code for a in answers] == [202, 202] and made.count("duel") == 1
        assert answers[0].json()["objective"] == "duel"
        for _k in range(4800):  # the build's end, up to 4 minutes on a loaded machine (a poll: it stops when done)
            r = c.get(f"/api/games/{gid}/advice")
            assert r.status_code == 200 and any(p.get("options") for p in r.json()["advice"])
            if not r.json()["builds"]:
                break
            job = r.json()["builds"][0]["job"]
            assert job["status"] in ("solving", "done") and 0 <= job["fraction"] <= 0.99
            threading.Event().wait(0.05)
        assert r.json()["advice"][0]["exact"] and made.count("duel") == 1, json.dumps([made, r.json()["advice"][0]])
        # a game that lacks nothing has nothing to build
        pig = new_game(c, rules="pig", players=("A", "B"))["id"]
        entry(c, pig, "roll 4")
        assert c.get(f"/api/games/{pig}/advice").json()["builds"] == []
        one_line_error(c.post(f"/api/games/{pig}/build", json={"objective": "duel"}), 400)
    assert any(tables.glob("*-duel/meta.json"))


def test_a_fixed_point_table_is_noted_without_a_command(client):
    """Classic's shipped duel is stored in fixed point: the page's advice says so, and names
    no command to type (the command line's does)."""
    gid = new_game(client, players=("Ann", "Bob"))["id"]
    entry(client, gid, "roll 1,5,2,3,3")
    (part,) = [p for p in client.get(f"/api/games/{gid}/advice").json()["advice"] if p.get("options")]
    assert part["exact"] and "fixed point" in part["note"] and "thousand solve" not in part["note"]


def test_three_players_are_told_the_measured_cost_in_words(client):
    """Three players of plain: no exact table yet; the approximation says what it costs in win
    chance, and the build of the table of three is offered."""
    gid = new_game(client, rules="plain")["id"]
    entry(client, gid, "roll 1,5,2,3,4")
    body = client.get(f"/api/games/{gid}/advice").json()
    text = json.dumps(body)
    assert "`thousand" not in text
    (part,) = [p for p in body["advice"] if p.get("options")]
    assert "gave up" in part["method"] and "% of winning chance" in part["method"]
    assert [b["objective"] for b in body["builds"]] == ["players3"]
    ru = client.get(f"/api/games/{gid}/advice?lang=ru").json()
    assert any("шанса на победу" in p["method"] for p in ru["advice"])


def test_a_restart_loses_no_game(folder):
    with AppClient(create_app(folder)) as c:
        gid = new_game(c)["id"]
        entry(c, gid, "roll 1,5,2,3,3")
        log = entry(c, gid, "roll 5,5,5")["log"]
    with AppClient(create_app(folder)) as c:
        state = c.get(f"/api/games/{gid}").json()
        assert state["log"] == log
        listed = c.get("/api/games").json()
        assert [g["id"] for g in listed] == [gid] and listed[0]["entries"] == 2


def test_save_and_import_use_the_scorekeepers_format(client, tmp_path):
    gid = new_game(client)["id"]
    entry(client, gid, "roll 1,5,2,3,3")
    r = client.get(f"/api/games/{gid}/save")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    data = r.json()
    # the file resumes in `thousand play`
    g = Game.from_json(data)
    assert g.log == ["roll 1,2,3,3,5"] and g.names == ["Ann", "Bob", "Cat"]
    r = client.post("/api/games/import", json=data)
    assert r.status_code == 201 and r.json()["log"] == g.log and r.json()["id"] != gid
    bad = dict(data, log=["roll 9,9,9,9,9"])
    one_line_error(client.post("/api/games/import", json=bad), 400)
    one_line_error(client.post("/api/games/import", json={"format": 1}), 400)
    one_line_error(client.post("/api/games/import", json=dict(data, rules="/etc/passwd")), 400)


def test_language_per_request(client):
    gid = new_game(client)["id"]
    en = client.get(f"/api/games/{gid}").json()
    ru = client.get(f"/api/games/{gid}?lang=ru").json()
    assert en["where"] == "Ann to play: roll 5 dice" and ru["where"] == "ходит Ann: бросать 5 кубиков"
    assert client.get(f"/api/games/{gid}", headers={"Accept-Language": "ru-RU,ru;q=0.9"}).json()["where"] == ru["where"]
    words = client.get("/api/strings?lang=ru").json()["words"]
    assert words["new_game"] == "Новая игра" and client.get("/api/strings").json()["words"]["new_game"] == "New game"
    err = client.post(f"/api/games/{gid}/entry?lang=ru", json={"entry": "stop"}).json()["error"]
    assert err.startswith("записывать пока нечего")


def test_requests_to_one_game_are_serialised(client, folder):
    """Many rolls sent at once to one game: each is applied whole or refused whole, and the
    saved log is the log of the answers (nothing lost, nothing applied twice)."""
    gid = new_game(client, rules="pig", players=("A", "B"))["id"]
    results = []

    def send():
        r = client.post(f"/api/games/{gid}/entry", json={"entry": "roll 4"})
        results.append(r.status_code)

    threads = [threading.Thread(target=send) for _k in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert set(results) == {200}
    log = json.loads(saved(folder, gid))["log"]
    assert log == ["roll 4"] * 12


def test_the_serve_command_says_where_and_warns_on_the_network(tmp_path):
    import socket
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "thousand.cli",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
            "--games",
            str(tmp_path / "g"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        first, second = proc.stdout.readline(), proc.stdout.readline()
        assert f"http://0.0.0.0:{port}/" in first and str(tmp_path / "g") in first
        assert "only with its link" in second
        assert proc.stdout.readline().startswith("on a phone: http://")
        assert "█" in proc.stdout.readline()  # the QR code of that address
        for _k in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/presets", timeout=2) as r:
                    status, body = r.status, json.loads(r.read())
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        assert status == 200 and body[0]["name"] == "classic"
    finally:
        proc.terminate()
        proc.wait(10)
    from click.testing import CliRunner

    from thousand.cli import main

    r = CliRunner().invoke(main, ["serve", "--port", "99999"])
    assert r.exit_code == 2 and "99999" in r.output
    r = CliRunner().invoke(main, ["serve", "--games", "/proc/nope/x"])
    assert r.exit_code == 2 and r.output.startswith("thousand: error: cannot use /proc/nope/x")


def exact_advice_of_three(c, gid, seconds: float) -> dict:
    """The advice once the equilibrium of three players, solved in the background, is
    there (202 with the objective meanwhile): its one part, exact."""
    for _k in range(int(seconds / 0.05)):
        r = c.get(f"/api/games/{gid}/advice")
        if r.status_code == 200:
            break
        assert r.status_code == 202 and r.json()["objective"] == "players3"
        threading.Event().wait(0.05)
    (part,) = r.json()["advice"]
    assert part["exact"] and "against 2 players who all play their best" in part["method"]
    # every player's chance after each option: the mover's first (its value), summing to 1
    assert len(part["others"]) == 2
    for o in part["options"]:
        assert abs(sum(o["chances"]) - 1) < 1e-9 and abs(o["chances"][0] - o[part["value"]]) < 1e-12
    return part


def test_three_players_get_the_exact_equilibrium(folder, tmp_path):
    """Three players of a small Pig: the equilibrium of three is solved in the background
    and the advice is exact, its stop value the table's value of the banked state."""
    from thousand.engine.player import PlayerState
    from thousand.storage.players import solve_players

    tables = tmp_path / "tables"
    with AppClient(create_app(folder, str(tables))) as c:
        gid = new_game(c, rules="pig", players=("A", "B", "C"), overrides=["goal=20"])["id"]
        entry(c, gid, "roll 4")
        part = exact_advice_of_three(c, gid, 30)
    sol = solve_players(load_ruleset("pig", ("goal=20",)), 3, str(tables))
    assert not sol.solved_now
    stop = next(o for o in part["options"] if o["action"] == "stop")
    assert abs(stop["win_probability"] - sol.value([PlayerState(0), PlayerState(0), PlayerState(4)])[2]) < 1e-12


@pytest.mark.slow  # the background solve of the pure twin outlasts the poll (test_play covers it there)
def test_three_players_with_equal_turns_by_seat_then_the_last_turns(folder, tmp_path):
    """Equal turns, three players: the equilibrium (seats in the state) gives the second
    seat's advice; once A has finished, B's last turn is exact with C still to play."""
    from thousand.engine.player import PlayerState
    from thousand.storage.players import solve_players

    tables = tmp_path / "tables"
    with AppClient(create_app(folder, str(tables))) as c:
        gid = new_game(c, rules="pig", players=("A", "B", "C"), overrides=["goal=10", "equal_turns=true"])["id"]
        for e in ("roll 3", "stop", "roll 4"):
            entry(c, gid, e)
        part = exact_advice_of_three(c, gid, 30)
        sol = solve_players(load_ruleset("pig", ("goal=10", "equal_turns=true")), 3, str(tables))
        stop = next(o for o in part["options"] if o["action"] == "stop")
        # B (seat 2) stops at 4: C to move in seat 3, then A at 3, then B at 4
        want = sol.value([PlayerState(0), PlayerState(3), PlayerState(4)], seat=2)[2]
        assert abs(stop["win_probability"] - want) < 1e-12
        for e in ("stop", "roll 2", "stop", "roll 6", "roll 6", "stop", "roll 5"):  # A banks 3 + 12 = 15
            entry(c, gid, e)
        r = c.get(f"/api/games/{gid}/advice")
        assert r.status_code == 200, r.text
        (part,) = r.json()["advice"]
        assert part["exact"] and "last turn of the round, to beat 15 (held by 1), 1 still to play" in part["method"]


@pytest.mark.slow
def test_three_players_of_a_small_classic_get_the_exact_equilibrium(folder, tmp_path):
    """Three players of a 1000 game with pits, samosval, overtaking, bolts and a barrel with
    push-off: the equilibrium is solved in the background (the levels swept until they
    settle) and the advice is exact, its best value the table's value of the state."""
    from thousand.engine.player import Moves
    from thousand.storage.players import solve_players

    tables = tmp_path / "tables"
    sets = [
        "goal=100",
        "pits=[{low=25,exit=50}]",
        "barrel.threshold=75",
        "dump=[55]",
        "barrel.max_falls=1",
        "bolts.limit=2",
        'bolts.exempt=["unopened"]',
    ]
    with AppClient(create_app(folder, str(tables))) as c:
        gid = new_game(c, rules="classic", players=("A", "B", "C"), overrides=sets)["id"]
        part = exact_advice_of_three(c, gid, 60)
    rs = load_ruleset("classic", sets)
    sol = solve_players(rs, 3, str(tables))
    assert not sol.solved_now
    x0 = Moves(rs).normalise(Moves(rs).initial())
    best = max(o["win_probability"] for o in part["options"])
    assert abs(best - sol.value([x0, x0, x0])[0]) < 1e-12


def test_the_review_of_a_game_is_the_commands(folder, tmp_path):
    """GET /api/games/{id}/review: 202 while the table it needs is solved, then the same
    review as `thousand review` of the game's save file; an unknown game is a 404."""
    from thousand.play.review import review_game

    tables = tmp_path / "tables"
    with AppClient(create_app(folder, str(tables)), raise_server_exceptions=False) as c:
        gid = new_game(c, rules="pig", players=("A", "B"), overrides=["goal=20"])["id"]
        for e in ["roll 6", "roll 6", "stop", "roll 5", "roll 4", "stop", "roll 6", "roll 4", "roll 3"]:
            entry(c, gid, e)
        for _k in range(600):
            r = c.get(f"/api/games/{gid}/review")
            if r.status_code == 200:
                break
            assert r.status_code == 202 and r.json()["status"] == "solving"
            threading.Event().wait(0.05)
        got = r.json()
        assert got["status"] == "ready"
        want = review_game(Game.from_json(json.loads(saved(folder, gid))), tables_dir=str(tables)).to_json()
        assert got["review"] == json.loads(json.dumps(want))
        assert [d["chosen"] for d in got["review"]["decisions"]][:2] == ["roll 1", "stop"]
        one_line_error(c.get("/api/games/0123456789abcdef/review"), 404)


# ----------------------------------------------------------------------------- on the LAN

LAN = "http://192.0.2.1:8000/"  # a documentation address: the label of --lan's URL, never contacted


@pytest.fixture
def lan(folder):
    """The server of `thousand serve --lan`, a request from its own machine and one from a
    phone of the network (test clients with those addresses; no traffic leaves the process)."""
    app = create_app(folder, lan_url=LAN)
    with (
        AppClient(app, raise_server_exceptions=False, client=("127.0.0.1", 50001)) as host,
        AppClient(app, raise_server_exceptions=False, client=("192.0.2.20", 50002)) as phone,
    ):
        yield host, phone


def test_on_the_lan_a_game_opens_only_with_its_token(lan, folder):
    host, phone = lan
    made = new_game(host, players=("Ann", "Bob"))
    gid, token = made["id"], made["token"]
    assert len(token) >= 22 and (folder / f"{gid}.token").stat().st_mode & 0o777 == 0o600
    before = saved(folder, gid)
    for r in [
        phone.get(f"/api/games/{gid}"),
        phone.get(f"/api/games/{gid}", params={"token": token[:-1] + "x"}),
        phone.post(f"/api/games/{gid}/entry", json={"entry": "roll 1,5,2,3,4"}),
        phone.post(f"/api/games/{gid}/undo"),
        phone.get(f"/api/games/{gid}/advice"),
        phone.get(f"/api/games/{gid}/review"),
        phone.get(f"/api/games/{gid}/save"),
        phone.delete(f"/api/games/{gid}"),
    ]:
        assert "token" in one_line_error(r, 403)
    assert saved(folder, gid) == before and phone.get("/api/games").json() == []
    # with the token (the link's ?token= or the page's header) the phone plays
    assert phone.get(f"/api/games/{gid}", params={"token": token}).status_code == 200
    r = phone.post(f"/api/games/{gid}/entry", json={"entry": "roll 1,5,2,3,4"}, headers={"X-Thousand-Token": token})
    assert r.status_code == 200 and "token" not in r.json()
    assert saved(folder, gid) != before
    # the host machine sees every game with its token; a game a phone makes is the phone's too
    assert [(g["id"], g["token"]) for g in host.get("/api/games").json()] == [(gid, token)]
    mine = new_game(phone, players=("Cat", "Dan"))
    assert phone.get(f"/api/games/{mine['id']}", headers={"X-Thousand-Token": mine["token"]}).status_code == 200
    one_line_error(phone.get(f"/api/games/{mine['id']}", headers={"X-Thousand-Token": token}), 403)
    assert phone.get("/api/server").json() == {"lan_url": LAN, "trusted": False}


def test_without_lan_the_only_device_is_this_machine(client):
    """Listening on loopback alone (no --lan), every request is this machine's: no token asked."""
    gid = new_game(client, players=("Ann", "Bob"))["id"]
    assert client.get(f"/api/games/{gid}").status_code == 200
    assert client.get("/api/server").json() == {"lan_url": None, "trusted": True}


def test_changes_are_rate_limited_per_device(lan, folder):
    from thousand.web.app import BURST

    host, phone = lan
    made = new_game(phone, players=("Ann", "Bob"))
    head = {"X-Thousand-Token": made["token"]}
    codes = [phone.post(f"/api/games/{made['id']}/undo", headers=head).status_code for _k in range(BURST + 10)]
    assert 429 in codes and set(codes) <= {409, 429}  # nothing to undo, or too many at once
    one_line_error(phone.post(f"/api/games/{made['id']}/undo", headers=head), 429)
    # another device is not held back, and reading is never limited
    assert host.post(f"/api/games/{made['id']}/undo").status_code == 409
    assert phone.get(f"/api/games/{made['id']}", headers=head).status_code == 200


def test_the_qr_code_of_a_link(client):
    segno = pytest.importorskip("segno")
    r = client.get("/api/qr", params={"text": LAN + "#game=0123456789abcdef&t=abc"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml") and b"<svg" in r.content
    assert segno.make(LAN, error="m").version >= 1
    one_line_error(client.get("/api/qr", params={"text": "x" * 501}), 400)
    one_line_error(client.get("/api/qr"), 400)


def test_a_killed_server_loses_no_game(tmp_path):
    """A real `thousand serve` killed (SIGKILL) in the middle of a game, and started again
    on the same folder: the game goes on from its last answered entry."""
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    def start(port):
        proc = subprocess.Popen(
            [sys.executable, "-m", "thousand.cli", "serve", "--port", str(port), "--games", str(tmp_path / "g")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _k in range(150):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/presets", timeout=2).read()
                return proc
            except OSError:
                time.sleep(0.1)
        proc.kill()
        raise AssertionError("the server did not start")

    def call(port, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, method=method)
        req.add_header("Content-Type", "application/json")
        req.add_header("Origin", f"http://127.0.0.1:{port}")  # as the page sends it (a script must too)
        return json.loads(urllib.request.urlopen(req, timeout=10).read())

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = start(port)
    try:
        gid = call(port, "POST", "/api/games", {"rules": "classic", "players": ["Ann", "Bob"]})["id"]
        for e in ["roll 1,5,2,3,6", "roll 1,1,6"]:
            state = call(port, "POST", f"/api/games/{gid}/entry", {"entry": e})
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    proc = start(port)
    try:
        again = call(port, "GET", f"/api/games/{gid}")
        assert again["log"] == state["log"] and again["turn"] == state["turn"] and again["players"] == state["players"]
        assert call(port, "POST", f"/api/games/{gid}/undo")["log"] == state["log"][:-1]
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_log_kept_offline_is_taken_only_where_it_follows_the_servers(client, folder):
    """``POST /api/games/{id}/sync``: the whole log a phone kept with the server away. Taken
    when the server's game is still at the log the phone started from (its digest), refused
    with 412 when it moved on and 409 when an entry does not apply; neither refusal changes
    the saved game."""
    from thousand.web.offline import log_digest

    gid = new_game(client, rules="plain", players=("Ann", "Bob"))["id"]
    entry(client, gid, "roll 1,1,1,2,3")
    base = client.get(f"/api/games/{gid}").json()["log"]
    phone = base + ["stop", "roll 2,3,4,6,6"]  # Ann banks, Bob busts: kept on the phone
    before = saved(folder, gid)
    # refused: a stale base, a log that does not replay, malformed bodies
    assert "changed on the server" in one_line_error(
        client.post(f"/api/games/{gid}/sync", json={"since": log_digest([]), "log": phone}), 412
    )
    bad = one_line_error(
        client.post(f"/api/games/{gid}/sync", json={"since": log_digest(base), "log": base + ["roll 1,1,1,1,1"]}), 409
    )
    assert "entry 2" in bad
    for body in ({"log": phone}, {"since": log_digest(base), "log": "stop"}, {"since": 1, "log": []}):
        one_line_error(client.post(f"/api/games/{gid}/sync", json=body), 400)
    assert saved(folder, gid) == before
    # taken: the game is the phone's log, replayed by the server's engine
    r = client.post(f"/api/games/{gid}/sync", json={"since": log_digest(base), "log": phone})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["log"] == phone and [p["score"] for p in got["players"]] == [100, 0]
    assert client.get(f"/api/games/{gid}").json()["log"] == phone
    # a phone that took back entries offline sends a shorter log: that is taken too
    r = client.post(f"/api/games/{gid}/sync", json={"since": log_digest(phone), "log": phone[:1]})
    assert r.status_code == 200 and r.json()["log"] == phone[:1]


def test_the_log_digest_is_fnv1a():
    """The digest the page and the server share: 32-bit FNV-1a, checked on the published
    test vectors (Fowler, Noll and Vo's reference list): "" and "a" and "foobar"."""
    from thousand.web.offline import log_digest

    assert log_digest([]) == "811c9dc5"
    assert log_digest(["a"]) == "e40c292c"
    assert log_digest(["foobar"]) == "bf9cf968"
    # a log is its entries joined by newlines: two entries are not their concatenation
    assert log_digest(["foo", "bar"]) == log_digest(["foo\nbar"]) != log_digest(["foobar"])


def test_every_state_carries_the_rules_the_page_keeps_score_with(client):
    """``engine``: the ruleset's parameters and its scoring groups, the groups the engine's
    own scorer reads (three pairs, straights and the like expanded by the server)."""
    from thousand.rules.scoring import scoring_groups

    rs = load_ruleset("farkle-cardgames")
    gid = new_game(client, rules="farkle-cardgames", players=("Ann", "Bob"))["id"]
    eng = client.get(f"/api/games/{gid}").json()["engine"]
    assert eng["hash"] == rs.hash and eng["dice"] == 6 and eng["keep"] == rs.keep
    g = scoring_groups(rs)
    assert sorted(map(tuple, (tuple(c) + (p,) for c, p in eng["groups"]))) == sorted(
        tuple(int(v) for v in row) + (int(p),) for row, p in zip(g.counts, g.points)
    )
    # three pairs: each of the C(6, 3) = 20 choices of three different faces is a group of its own
    assert sum(1 for c, p in eng["groups"] if sorted(c) == [0, 0, 0, 2, 2, 2] and p == 1500) == 20


def test_every_word_the_page_asks_for_is_served():
    """The page's scripts name their words by key (``t("...")``, ``fmt("...")``, the keys of
    rules.js's refusals, ``data-w`` in the page, the sheet's ``h_`` + event): each has an
    entry in the words the server sends, so no key ever shows as text on a phone."""
    import re
    from pathlib import Path

    from thousand.web.app import PAGE_WORDS

    static = Path(create_app.__code__.co_filename).parent / "static"
    app, rules = (static / "app.js").read_text(), (static / "rules.js").read_text()
    keys = set(re.findall(r"\b(?:t|fmt)\(\"(\w+)\"[,)]", app)) | set(re.findall(r"new Refused\(\"(\w+)\"", rules))
    keys |= set(re.findall(r'data-w="(\w+)"', (static / "index.html").read_text()))
    keys |= {"h_" + e for e in re.findall(r'event: end\.event \|\| "(\w+)"', rules) + ["overshoot"]}
    assert len(keys) > 60 and keys <= set(PAGE_WORDS), sorted(keys - set(PAGE_WORDS))
