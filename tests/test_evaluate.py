"""thousand evaluate: exact values, Monte Carlo, blunders, the command line."""

import json

import pytest
from click.testing import CliRunner

from thousand.analysis.bots import load_bot
from thousand.analysis.evaluate import run_evaluation
from thousand.analysis.exact import exact_duel
from thousand.analysis.montecarlo import wilson
from thousand.analysis.oracle import Oracle
from thousand.cli import main
from thousand.engine import TurnRules
from thousand.rules import load_ruleset

PIG30 = load_ruleset("pig", ("goal=30",))
PLAIN = load_ruleset("plain", ("goal=100",))


def test_optimal_gives_up_nothing_duel():
    rep = run_evaluation(PIG30, "optimal", "optimal", games=200, seed=2, progress=False)
    ex = rep["exact"]
    opt = Oracle(PIG30, "duel", progress=False).solution.start_value()
    assert ex.value_first == pytest.approx(opt, abs=1e-10)
    assert ex.value_second == pytest.approx(1 - opt, abs=1e-10)
    for b in (rep["blunders"], rep["sweep_blunders"]):
        assert b.decisions > 0 and b.total == 0.0 and b.mistakes == 0


def test_optimal_against_the_tables_optimum_is_the_table():
    # the bot path (asked per decision) against the optimal opponent's turn distributions
    o = Oracle(PIG30, "duel", progress=False)
    bot = load_bot("optimal", PIG30, "duel", oracles={"duel": o})
    ex = exact_duel(TurnRules(PIG30), bot, None, o)
    assert ex.value_first == pytest.approx(o.solution.start_value(), abs=1e-10)


def test_optimal_gives_up_nothing_race():
    rep = run_evaluation(PLAIN, "optimal", objective="race", games=100, seed=2, progress=False)
    ex = rep["exact"]
    assert ex.value_first == pytest.approx(ex.optimum, abs=1e-9)
    assert rep["blunders"].decisions > 0 and rep["blunders"].total == 0.0


def test_hold_exact_agrees_with_monte_carlo_duel():
    rs = load_ruleset("pig", ("goal=50",))
    rep = run_evaluation(
        rs, "hold:12", "hold:15", games=3000, seed=11, progress=False, blunder_games=50, overrides=("goal=50",)
    )
    ex, mc = rep["exact"], rep["mc"]
    lo, hi = wilson(mc.first_wins, mc.first_games)
    assert lo <= ex.value_first <= hi
    lo, hi = wilson(mc.second_wins, mc.second_games)
    assert lo <= ex.value_second <= hi
    # the hold bot gives something up against the optimum, and says where
    assert rep["blunders"].total > 0 and "thousand advise pig --set goal=50" in rep["text"]


def test_hold_exact_agrees_with_monte_carlo_race():
    rep = run_evaluation(PLAIN, "hold:30", objective="race", games=3000, seed=4, progress=False, blunder_games=50)
    ex = rep["exact"]
    lo, hi = rep["json"]["monte_carlo"]["ci95"]
    assert lo <= ex.value_first <= hi
    assert ex.value_first > ex.optimum


def test_monte_carlo_is_reproducible_and_random_is_not_exact():
    a = run_evaluation(PIG30, "random", "hold:10", games=200, seed=9, progress=False)
    b = run_evaluation(PIG30, "random", "hold:10", games=200, seed=9, progress=False)
    assert a["json"]["monte_carlo"] == {**b["json"]["monte_carlo"], "seconds": a["json"]["monte_carlo"]["seconds"]}
    assert "not deterministic" in a["json"]["exact"]["skipped"]


def test_budget_fallback_is_one_line():
    rep = run_evaluation(PIG30, "hold:10", "hold:10", games=50, budget=100, progress=False)
    assert rep["exact"] is None
    line = [ln for ln in rep["text"].splitlines() if ln.startswith("exact:")]
    assert len(line) == 1 and "skipped" in line[0] and "Monte Carlo only" in line[0]


def test_cli_evaluate_json_and_errors(tmp_path):
    r = CliRunner()
    res = r.invoke(main, ["evaluate", "pig", "--set", "goal=30", "--bot", "hold:10", "--games", "100", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.splitlines()[-1])
    assert data["bot"] == "hold:10" and data["monte_carlo"]["games"] == 100
    assert 0 < data["exact"]["value_first"] < 1
    res = r.invoke(main, ["evaluate", "pig", "--set", "goal=30", "--bot", "nope"])
    assert res.exit_code == 2 and "unknown bot" in res.output and "Traceback" not in res.output
    res = r.invoke(main, ["evaluate", "pig", "--set", "goal=30", "--bot", "nosuchmod:bot"])
    assert res.exit_code == 2 and "cannot import" in res.output


@pytest.mark.twin
@pytest.mark.slow
def test_pig_hold20_neller():
    """Neller & Presser: hold at 20 against itself, the first player wins 0.5347."""
    rs = load_ruleset("pig")
    rep = run_evaluation(rs, "hold:20", "hold:20", games=4000, seed=1, progress=False, blunder_games=0)
    ex, mc = rep["exact"], rep["mc"]
    assert round(ex.value_first, 4) == 0.5347
    assert ex.value_second == pytest.approx(1 - ex.value_first, abs=1e-12)
    lo, hi = wilson(mc.first_wins, mc.first_games)
    assert lo <= ex.value_first <= hi


def test_optimal_exact_is_the_table_with_hot_dice_beyond_saturation():
    # keep "any" on a points barrel: beyond the saturation total the turn banks with a
    # smaller set-aside rather than keep both dice and be forced to roll hot dice again
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from tiny import TINY_DUELS

    from thousand.rules import from_mapping

    rs = from_mapping(TINY_DUELS["barrel-push-off"])
    o = Oracle(rs, "duel", progress=False)
    bot = load_bot("optimal", rs, "duel", oracles={"duel": o})
    v = o.solution.start_value()
    for opp in (None, bot):
        ex = exact_duel(TurnRules(rs), bot, opp, o)
        assert ex.value_first == pytest.approx(v, abs=1e-10)
        assert ex.value_second == pytest.approx(1 - v, abs=1e-10)


def test_cli_evaluate_worst_zero_and_bad_counts():
    r = CliRunner()
    res = r.invoke(main, ["evaluate", "pig", "--set", "goal=30", "--bot", "hold:10", "--games", "20", "--worst", "0"])
    assert res.exit_code == 0, res.output
    assert "blunders" in res.output and "worst decisions" not in res.output
    for opt in (["--worst", "-1"], ["--budget", "-1"], ["--blunder-games", "-1"], ["--timeout", "0"]):
        res = r.invoke(main, ["evaluate", "pig", "--set", "goal=30", "--bot", "hold:10", "--games", "20", *opt])
        assert res.exit_code == 2 and "must be" in res.output and "Traceback" not in res.output, (opt, res.output)


def test_the_worst_decisions_are_distinct_and_the_worst_of_all_taken():
    """A bot meets the same decision in many games: each is counted every time, listed
    once, and the list holds the largest losses of the distinct decisions."""
    from thousand.analysis.montecarlo import mc_duel

    rep = run_evaluation(PIG30, "hold:10", "optimal", games=400, seed=3, worst=6, progress=False, exact=False)
    b = rep["blunders"]
    listed = [(st.key(), a) for _l, _s, st, a, _b, _v in b.worst_sorted()]
    assert len(listed) == len(set(listed)) == 6

    class Every:
        """The same games again, every decision kept."""

        seen: list = []

        def record(self, st, a):
            self.seen.append((st, a))

        def end_game(self):
            pass

    every = Every()
    bot = load_bot("hold:10", PIG30, "duel", None, 3, 2.0, {})
    opp = load_bot("optimal", PIG30, "duel", None, 3, 2.0, {})
    mc_duel(TurnRules(PIG30), bot, opp, 400, 3, every)
    assert len(every.seen) == b.decisions
    losses = {(st.key(), a): b.oracle.loss(st, a)[0] for st, a in every.seen}
    assert len(losses) < len(every.seen)  # decisions met more than once
    assert [w[0] for w in b.worst_sorted()] == sorted(losses.values(), reverse=True)[:6]


def test_race_monte_carlo_of_a_user_bot_reports_mean_turns():
    # a user's bot plays in the Python game loop (not the compiled simulator): its race
    # report is the mean of the turns played, with its interval
    class Hold30:
        def decide(self, state):
            first = state.legal[0].keep
            cands = [a for a in state.legal if a.keep == first]
            stop = [a for a in cands if not a.roll]
            return stop[0] if stop and state.turn_total + cands[0].points >= 30 else cands[-1]

    import sys
    import types

    mod = types.ModuleType("_race_bot_mod")
    mod.Hold30 = Hold30
    sys.modules["_race_bot_mod"] = mod
    rep = run_evaluation(
        PLAIN,
        "_race_bot_mod:Hold30",
        objective="race",
        games=400,
        seed=3,
        exact=False,
        progress=False,
        blunder_games=20,
    )
    mc = rep["json"]["monte_carlo"]
    assert mc["engine"] == "python" and mc["games"] == 400
    lo, hi = mc["ci95"]
    assert lo < mc["mean_turns"] < hi
    # the mean of the turns the loop played, recomputed here
    turns = rep["mc"].turns
    assert len(turns) == 400 and mc["mean_turns"] == pytest.approx(sum(turns) / 400)


def test_a_kept_turn_distribution_is_the_enumerated_one_and_asks_the_bot_once(monkeypatch):
    """PolicyTurns keeps each turn's end distribution: asked again, it gives the same one
    without asking the bot, and past ENDS_KEPT it enumerates again to the same numbers."""
    import thousand.analysis.exact as exact
    from thousand.analysis.bots import HoldBot
    from thousand.engine.player import Moves, PlayerState

    asked = []

    class Counting(HoldBot):
        def choose(self, state):
            asked.append(state)
            return super().choose(state)

    engine = TurnRules(PLAIN)
    x, y = Moves(PLAIN).initial(), PlayerState(40)
    kept = exact.PolicyTurns(engine, Counting(25))
    first = kept.ends(x, y)
    n = len(asked)
    assert n > 0 and abs(sum(first.values()) - 1.0) < 1e-12
    assert kept.ends(x, y) is first and len(asked) == n
    monkeypatch.setattr(exact, "ENDS_KEPT", 0)
    fresh = exact.PolicyTurns(engine, Counting(25))
    assert fresh.ends(x, y) == first and fresh.ends(x, y) == first and not fresh._ends
