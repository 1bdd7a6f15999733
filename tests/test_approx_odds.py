"""The duels' odds combined (thousand.solvers.approx, method ``odds``), the decisions of an
approximation beside the equilibrium's along equilibrium play (thousand.analysis.alongside),
and how a measured loss is followed to longer games (thousand.advice.costs.growth)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from thousand import kernel
from thousand.cli import main
from thousand.engine.player import Moves, PlayerState
from thousand.rules import load_ruleset
from thousand.solvers.approx import OddsDecider, ProductDecider, combine_duels, duel_matrix
from thousand.solvers.nplayer import solve_nplayer
from thousand.solvers.profile import EquilibriumDecider, evaluate_profile
from thousand.storage.solve import solve_objective

rates = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(rates, st.lists(rates, min_size=1, max_size=4))
def test_odds_are_the_first_finisher_of_a_race_of_memoryless_players(mine, theirs):
    """Players who finish at exponential rates: the mover beats opponent j in a duel with
    mine / (mine + theirs_j) and finishes first of all with mine / (mine + sum theirs)."""
    q = np.array([mine / (mine + r) for r in theirs])
    assert combine_duels(q, "odds") == pytest.approx(mine / (mine + sum(theirs)), rel=1e-12)
    assert combine_duels(q, "product") == pytest.approx(np.prod(q), rel=1e-12)


def test_odds_of_one_opponent_are_the_duel_and_of_a_sure_loss_nothing():
    q = np.array([[0.3], [1.0], [0.0]])
    assert np.allclose(combine_duels(q, "odds"), [0.3, 1.0, 0.0])
    assert combine_duels(np.array([0.0, 0.0]), "odds") == 0.0
    assert combine_duels(np.array([1.0, 0.4]), "odds") == pytest.approx(0.4)  # the first never finishes
    with pytest.raises(ValueError):
        combine_duels(q, "sum")


@pytest.fixture(scope="module")
def pig50(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("tables"))
    rs = load_ruleset("pig", ("goal=50",))
    return rs, solve_nplayer(rs, 3), solve_objective(rs, "duel", d, progress=False), d


def test_the_odds_advice_is_the_turn_its_decider_plays(pig50):
    """The advice (duels_advisor) and the decider the exact evaluation plays (OddsDecider)
    value a turn alike: the advice's value at the start of the turn is the turn DP of the
    decider's end values, and a stop is worth q1 q2 / (1 - p1 p2) (the two-opponent form)."""
    from thousand.solvers.advice import duels_advisor

    rs, sol, duel, _d = pig50
    sp, m = sol.space, len(sol.space)
    table = kernel.roll_table(rs)
    dec = OddsDecider(sp, duel_matrix(sp, duel), 2)
    moves = Moves(rs)
    for me, a, b in [(0, 0, 0), (12, 25, 3), (27, 5, 20), (4, 48, 49)]:
        x, y1, y2 = (moves.normalise(PlayerState(v)) for v in (me, a, b))
        i = sp.lookup(x)
        stop, bust, win = dec.decide(i, np.array([sp.lookup(y1) * m + sp.lookup(y2)]))
        start = kernel.turn_dp(table, sp.stop_ok[i], stop, sp.forced_ok[i], stop, bust, win).start[0]
        adv = duels_advisor(duel, [y1, y2], "odds")
        assert adv.solve_turn(x).tv.start[0] == pytest.approx(start, abs=1e-12)
        if me + 5 >= 50:
            continue
        # a bank of 5 points leaves both opponents where they are
        x5 = moves.normalise(PlayerState(me + 5))
        p1, p2 = duel.value(y1, x5), duel.value(y2, x5)
        q1, q2 = 1 - p1, 1 - p2
        assert stop[5, 0] == pytest.approx(q1 * q2 / (1 - p1 * p2), abs=1e-12)


def test_the_odds_lose_against_the_equilibrium_and_less_than_the_product(pig50):
    """Pig to 50, three players: no seat gains by leaving the equilibrium for either method
    (an equilibrium), and the odds' worst loss is below the product's."""
    rs, sol, duel, _d = pig50
    sp = sol.space
    s0 = sol.index([Moves(rs).normalise(Moves(rs).initial())] * 3)
    P = duel_matrix(sp, duel)
    worst = {}
    for dec in (ProductDecider(sp, P, 2), OddsDecider(sp, P, 2)):
        losses = []
        for k in range(3):
            lineup = [EquilibriumDecider(sol)] * 3
            lineup[k] = dec
            got = evaluate_profile(sp, 3, lineup)[0][s0]
            assert got[k] <= sol.V[s0][k] + 1e-12
            losses.append(sol.V[s0][k] - got[k])
        worst[dec.name] = max(losses)
    assert worst["odds"] < worst["product"]


def test_decisions_along_equilibrium_play(pig50, tmp_path):
    """The equilibrium's own advice never chooses differently; the race does, each such
    decision losing what the equilibrium's values say; the same seed, the same games."""
    from thousand.analysis.alongside import AdvisorValues, along_equilibrium
    from thousand.base.objectives import objective
    from thousand.solvers.advice import race_advisor
    from thousand.storage.players import solve_players

    rs, _sol, _duel, d = pig50
    table = solve_players(rs, 3, d)
    race = solve_objective(rs, "race", d, progress=False)
    methods = {
        "itself": AdvisorValues(lambda me, opps: objective("players").advisor(table, opps, None)),
        "race": AdvisorValues(lambda me, opps: race_advisor(race), key=lambda me, opps: ()),
    }
    got, ended = along_equilibrium(table, methods, games=60, seed=3)
    assert ended == 60
    assert got["itself"].decisions == got["race"].decisions > 100
    assert got["itself"].different == 0 and got["itself"].largest == 0.0
    r = got["race"]
    assert 0 < r.different < r.decisions and 0 < r.mean_loss <= r.largest < 1
    # each loss is the equilibrium's value of its best action minus that of the race's:
    # the race holds at 20 or more with nobody near the goal, which the equilibrium does too
    assert r.share < 0.5
    lo, hi = r.to_json()["share_ci95"]
    assert lo < r.share < hi
    again, _ = along_equilibrium(table, {"race": methods["race"]}, games=60, seed=3)
    assert again["race"].to_json() == r.to_json()


def _cases(points, method="odds", preset="plain", players=3):
    return [
        {"ruleset": f"{preset}-{g}", "preset": preset, "goal": g, "players": players, "dice": 5,
         "losses": {method: [v, v / 2]}}
        for g, v in points
    ]  # fmt: skip


def test_growth_is_the_power_law_through_the_worst_losses(monkeypatch):
    import thousand.advice.costs as costs

    plain = load_ruleset("plain")
    exact = [(g, 2e-4 * (g / 250) ** 1.5) for g in (250, 500, 750)]
    monkeypatch.setattr(costs, "measured_cases", lambda: _cases(exact))
    fit = costs.growth("odds", plain, 3)
    assert fit.b == pytest.approx(1.5) and fit.spread == pytest.approx(0, abs=1e-12)
    lo, mid, hi = fit.at(1000)
    assert mid == pytest.approx(2e-4 * 4**1.5) and lo == pytest.approx(mid) and hi == pytest.approx(mid)
    cost = costs.measured_cost("odds", plain, 3)
    assert cost.longer and cost.projected == pytest.approx((mid, 1.0))
    assert "give about 0.2% here (a projection: the measured losses lie within 1.0 times" in cost.words()
    # scattered points: the interval widens, and holds the line
    noisy = [(250, 2e-4), (500, 9e-4), (750, 1e-3)]
    monkeypatch.setattr(costs, "measured_cases", lambda: _cases(noisy))
    fit = costs.growth("odds", plain, 3)
    lo, mid, hi = fit.at(1000)
    assert lo < mid < hi and hi / lo > 2
    x, y = np.log([g for g, _ in noisy]), np.log([v for _, v in noisy])
    b, a = np.polyfit(x, y, 1)
    assert mid == pytest.approx(math.exp(a + b * math.log(1000)))
    resid = y - (a + b * x)
    assert fit.spread == pytest.approx(math.sqrt((resid**2).sum() / 1))
    assert costs.measured_cost("odds", plain, 3).projected == pytest.approx((mid, math.exp(fit.spread)))
    # two goals: a line through both, no error to tell, so no projection is quoted
    monkeypatch.setattr(costs, "measured_cases", lambda: _cases(noisy[:2]))
    assert costs.growth("odds", plain, 3).spread is None
    assert costs.measured_cost("odds", plain, 3).projected is None
    # one goal: no growth, and the words say only that the game is longer
    monkeypatch.setattr(costs, "measured_cases", lambda: _cases(noisy[:1]))
    assert costs.growth("odds", plain, 3) is None
    assert "may be larger or smaller" in costs.measured_cost("odds", plain, 3).words()


def test_three_players_advice_by_the_odds(pig50, monkeypatch):
    """Where the odds measured the least, the advice plays them, its values estimated
    chances to win that the duel table gives."""
    import thousand.advice.policy
    from thousand.advice.costs import Cost

    rs, _sol, duel, d = pig50
    made = {
        "odds": Cost("odds", 0.0002, 0.0003, ("pig to 50, 3 players",), 50, False),
        "product": Cost("product", 0.0004, 0.0008, ("pig to 50, 3 players",), 50, False),
        "duel": Cost("duel", 0.001, 0.002, ("pig to 50, 3 players",), 50, False),
    }
    monkeypatch.setattr(thousand.advice.policy, "measured_cost", lambda m, rs, n, seat_last=None: made.get(m))
    monkeypatch.setattr(thousand.advice.policy.Advisor, "players_available", lambda self, n: (False, "not here"))
    args = ["advise", "pig", "--set", "goal=50", "--me", "12", "--opp", "25", "--opp", "3", "--turn", "8"]
    r = CliRunner().invoke(main, [*args, "--tables", d, "--json"])
    assert r.exit_code == 0, r.output
    part = json.loads(r.stdout)["advice"][-1]
    assert not part["exact"] and part["method_id"] == "odds"
    assert "steady rate" in part["method"] and "gave up less than 0.05%" in part["method"]
    stop = next(o for o in part["options"] if o["action"] == "stop")
    moves = Moves(rs)
    x = moves.normalise(PlayerState(20))
    p1, p2 = (duel.value(moves.normalise(PlayerState(v)), x) for v in (25, 3))
    assert stop["estimated_win_probability"] == pytest.approx((1 - p1) * (1 - p2) / (1 - p1 * p2), abs=1e-12)


def test_a_kind_measured_with_other_numbers_of_players_plays_its_familys_best(monkeypatch):
    """Four players of a family measured with three only: no cost is quoted, and the method
    is the one whose worst loss was smallest where the family was measured with all of them."""
    import thousand.advice.costs as costs

    fake = _cases([(150, 0.002)], method="product", preset="classic") + _cases(
        [(200, 0.001)], method="product", preset="classic"
    )
    for c, odds in zip(fake, (0.003, 0.0015)):
        c["losses"]["odds"] = [odds]
    fake += _cases([(500, 0.0001)], method="odds", preset="plain")
    monkeypatch.setattr(costs, "measured_cases", lambda: fake)
    classic = load_ruleset("classic")
    assert costs.measured_cost("product", classic, 4) is None
    assert costs.least_in_family(("odds", "product"), classic) == "product"
    # a method measured on some games only is not compared on the others
    assert costs.least_in_family(("odds", "product", "duel"), classic) is None
    assert costs.least_in_family(("odds",), load_ruleset("plain")) == "odds"


def test_the_results_page_prints_the_measured_file():
    """docs/results.md's tables of the approximations and its lines of their growth are the
    bench's printout of the file the advice reads: a measurement written without the page
    (or the page edited by hand) fails here."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "bench"))
    try:
        import bench_approx
    finally:
        sys.path.remove(str(root / "bench"))
    page = (root / "docs" / "results.md").read_text(encoding="utf-8")
    assert bench_approx.markdown_table() in page
    assert bench_approx.markdown_table(equal_turns=True) in page
    assert bench_approx.better_table() in page
    assert bench_approx.lookahead_table() in page
    for line in bench_approx.growth_fits()[1]:
        assert line in page
