"""One advisor: every way of asking gives the same answer.

Random games are played through the scorekeeper; at every decision along them the same
position is asked of each front end -- the command line's ``thousand advise --json`` (its
options written from the game's state here, independently of the scorekeeper's reading),
the scorekeeper's ``?``, the web page's advice API (the same entries posted to a server),
the ``optimal`` bot of ``evaluate`` (where the rules leave it a choice) and, once the game is
over, ``review`` (each reviewed decision's best option) -- and all must name the same best
action, the same method and the same value. Kinds: two, three and four players, equal
turns, and rules whose exact table is not at hand (an estimate, the same everywhere).
"""

from __future__ import annotations

import json
import random
import threading

import pytest
from click.testing import CliRunner

from thousand.advice.policy import advice_json
from thousand.analysis.bots import BotState, load_bot
from thousand.base.choices import SEATS
from thousand.cli import main
from thousand.play.game import Advisors, Game
from thousand.play.review import review_game
from thousand.rules import load_ruleset

pytest.importorskip("starlette")
from webclient import AppClient  # noqa: E402

from thousand.web.app import create_app  # noqa: E402

KINDS = {  # name: (preset, overrides, players, positions asked)
    "two players": ("pig", ("goal=20",), 2, 200),
    "three players": ("pig", ("goal=12",), 3, 200),
    "four players": ("pig", ("goal=8",), 4, 200),
    "equal turns, three players": ("pig", ("goal=10", "equal_turns=true"), 3, 200),
    "set-asides, two players": ("farkle", ("goal=1000",), 2, 200),
    "no exact table at hand": ("plain", ("goal=2000",), 2, 200),
}


def _cli_args(preset: str, sets, g: Game, tables: str) -> list[str]:
    """``thousand advise`` for the player to move in ``g``, written from the game's state:
    the opponents in the order they move next (in a completed round's last turns, the
    players after this one), the seat under equal turns, the roll or the dice to roll."""
    rs, n, me = g.rs, len(g.names), g.current
    x = g.states[me]
    args = ["advise", preset, *[a for s in sets for a in ("--set", s)], "--me", str(x.score)]
    args.append("--opened" if x.opened else "--unopened")
    after = [(me + k) % n for k in range(1, n)]
    if rs.equal_turns and g.finished:
        top = max(g.finished.values())
        tied = sum(1 for v in g.finished.values() if v == top)
        args += ["--to-beat", str(top)] + (["--tied", str(tied)] if tied > 1 else [])
        opponents = [j for j in range(me + 1, n)]
    else:
        opponents = [j for j in after if j not in g.finished]
        if rs.equal_turns:
            args += ["--seat", SEATS[me]]
    for j in opponents:
        args += ["--opp", str(g.states[j].score)]
    unopened = [str(k + 1) for k, j in enumerate(opponents) if not g.states[j].opened]
    for k in unopened:
        args += ["--opp-unopened", k]
    tr = g.turn
    args += ["--turn", str(tr.total)]
    args += ["--roll", ",".join(map(str, tr.roll))] if tr.roll is not None else ["--dice", str(tr.dice)]
    return [*args, "--tables", tables, "--json"]


def _answer(parts: list[dict]) -> tuple:
    """What every front end must agree on: the best option, the method (its short name: the
    heading names the players, whom the command line does not know), whether exact, the
    best value and what it means."""
    (main_part,) = [p for p in parts if p.get("options")]
    best = main_part["options"][0]
    value = main_part["value"]
    return best["label"], main_part["method_id"], main_part["exact"], value, round(best[value], 12)


def _decision(g: Game) -> bool:
    """Whether the player to move has a choice the advice speaks to."""
    tr = g.turn
    if g.over:
        return False
    return len(tr.options) > 1 if tr.roll is not None else g.engine.can_stop(tr.state)


def _random_entry(rnd: random.Random, g: Game) -> str:
    tr = g.turn
    if tr.roll is not None:
        return "keep " + ",".join(map(str, rnd.choice(tr.options)[1]))
    if g.engine.can_stop(tr.state) and rnd.random() < 0.35:
        return "stop"
    return "roll " + ",".join(str(rnd.randint(1, g.rs.faces)) for _k in range(tr.dice))


def _bot_state(g: Game) -> BotState | None:
    """The ``optimal`` bot's decision at a roll that leaves a choice (as ``evaluate`` asks it)."""
    tr = g.turn
    if tr.roll is None or len(g.engine.legal(tr.state)) < 2:
        return None
    n, me, rs = len(g.names), g.current, g.rs
    if rs.equal_turns and g.finished:
        top = max(g.finished.values())
        later = tuple(g.states[j] for j in range(me + 1, n))
        tied = sum(1 for v in g.finished.values() if v == top)
        return BotState.at(g.engine, tr.state, later[0] if later else None, later[1:], me, top, tied)
    opp = [g.states[(me + k) % n] for k in range(1, n) if (me + k) % n not in g.finished]
    return BotState.at(g.engine, tr.state, opp[0], tuple(opp[1:]), me if rs.equal_turns else None)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_front_end_gives_the_same_advice(kind, tmp_path, monkeypatch):
    import thousand.web.app

    monkeypatch.setattr(thousand.web.app, "RATE", 1e6)  # one client posts every entry of many games
    preset, sets, players, wanted = KINDS[kind]
    rs = load_ruleset(preset, sets)
    tables = str(tmp_path / "tables")
    names = [f"P{k}" for k in range(players)]
    advisors = Advisors(rs, "auto", tables)
    # the optimal bot of a duel reads the duel table (it would solve it): not where it is not at hand
    optimal = None if kind == "no exact table at hand" else load_bot("optimal", rs, "duel", tables, 0, 2.0, {})
    runner = CliRunner()
    rnd = random.Random(f"{kind}-1")
    asked = bots = reviewed = 0
    with AppClient(create_app(tmp_path / "games", tables)) as web:
        while asked < wanted:
            g = Game(rs, names, preset, sets, seed=rnd.randrange(10**6))
            gid = web.post("/api/games", json={"rules": preset, "overrides": list(sets), "players": names}).json()["id"]
            told: dict[int, tuple] = {}  # log position -> the advice given there
            while not g.over and asked < wanted and len(g.log) < 60:
                if _decision(g):
                    parts = advice_json(advisors.advice(g))
                    keeper = _answer(parts)
                    heading = next(p["method"] for p in parts if p.get("options"))
                    cli = runner.invoke(main, _cli_args(preset, sets, g, tables))
                    assert cli.exit_code == 0, cli.output
                    assert _answer(json.loads(cli.stdout)["advice"]) == keeper, (g.log, cli.stdout)
                    for _k in range(2400):  # a table the page builds in the background
                        r = web.get(f"/api/games/{gid}/advice")
                        if r.status_code == 200:
                            break
                        assert r.status_code == 202, r.text
                        threading.Event().wait(0.05)
                    assert _answer(r.json()["advice"]) == keeper, g.log
                    # the page and the scorekeeper know the names: the same heading, word for word
                    assert next(p["method"] for p in r.json()["advice"] if p.get("options")) == heading
                    state = _bot_state(g) if optimal is not None else None
                    if state is not None:
                        action = optimal.choose(state)
                        best = next(p.advice for p in advisors.advice(g) if p.advice is not None).best
                        assert action == best.detail["action"], (g.log, action, best)
                        bots += 1
                    told[len(g.log)] = (keeper, heading)
                    asked += 1
                entry = _random_entry(rnd, g)
                g.submit(entry)
                assert web.post(f"/api/games/{gid}/entry", json={"entry": entry}).status_code == 200
            for d in review_game(g, tables_dir=tables).decisions:
                if d.entry in told:
                    (label, _mid, exact, value_name, value), heading = told[d.entry]
                    assert (d.best, d.method, d.exact, d.value) == (label, heading, exact, value_name), (g.log, d)
                    assert d.best_value == pytest.approx(value, abs=1e-12)
                    reviewed += 1
    assert asked >= wanted and reviewed >= wanted // 4
    if kind == "set-asides, two players":
        assert bots >= 20  # set-asides with a choice: the bot was asked
