"""Three players and more: exact evaluation of fixed decisions (thousand.solvers.nplayer.
evaluate_profile) against a value iteration written apart; the approximations of
thousand.solvers.approx; the N-player tables (thousand.storage.players) with their checks; and the
interfaces: `thousand solve --players`, `thousand advise --opp ... --opp ...`, `thousand
play` with three players."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from itertools import product
from pathlib import Path

import numpy as np
import pytest
import tiny
from click.testing import CliRunner
from test_nplayer import reference_pig
from tiny import TINY_DUELS

from thousand.base.errors import StateError, TableError
from thousand.cli import main
from thousand.engine.player import Moves, PlayerState
from thousand.engine.states import WIN_INDEX
from thousand.rules import load_ruleset
from thousand.solvers.approx import DuelDecider, FinishDecider, ProductDecider, RaceDecider, duel_matrix, race_turns
from thousand.solvers.nplayer import NPlayerError, solve_nplayer
from thousand.solvers.profile import EquilibriumDecider, evaluate_profile
from thousand.storage import load_table
from thousand.storage.players import objective, solve_players
from thousand.storage.solve import solve_objective


def small_pig(goal: int, faces: int):
    return load_ruleset(
        "pig",
        (
            f"goal={goal}",
            f"faces={faces}",
            "scoring.singles={}",
            *[f"scoring.singles.{f}={f}" for f in range(2, faces + 1)],
        ),
    )


class HoldAt:
    """A seat that rolls until its turn total reaches ``k`` (or it can win), then banks:
    a win or a total of at least k is worth 1, a smaller bank -1, so the turn DP holds
    exactly there."""

    name = "hold"

    def __init__(self, space, k: int):
        self.space, self.k = space, k

    def decide(self, i, rest):
        T, K = int(self.space.T[i]), len(rest)
        stop = np.where(np.arange(T + 1) >= self.k, 1.0, -1.0)[:, None] * np.ones((1, K))
        stop[self.space.stop_idx[i] == WIN_INDEX] = 1.0
        return stop, np.zeros(K), np.ones(K)


def reference_holds(goal: int, faces: int, holds: list[int], sweeps: int = 20000):
    """Value iteration for seats holding at fixed totals, apart from the solver:
    V[(k, scores, t)] is the vector of win chances in the order of play from the mover,
    seat k to move, scores from the mover on."""
    N = len(holds)
    V = {(k, s, t): np.zeros(N) for k in range(N) for s in product(range(goal), repeat=N) for t in range(goal)}
    for _n in range(sweeps):
        change = 0.0
        for (k, s, t), old in V.items():
            if s[0] + t >= goal:
                continue
            nk = (k + 1) % N

            def after(total):
                if s[0] + total >= goal:
                    return np.eye(N)[0]
                if total >= holds[k]:
                    return np.roll(V[(nk, s[1:] + (s[0] + total,), 0)], 1)
                return V[(k, s, total)]

            outs = [np.roll(V[(nk, s[1:] + (s[0],), 0)], 1)] + [after(t + f) for f in range(2, faces + 1)]
            new = sum(outs) / faces
            change = max(change, float(np.max(np.abs(new - old))))
            V[(k, s, t)] = new
        if change < 1e-15:
            return V
    raise AssertionError("the reference did not converge")


def test_fixed_decisions_are_evaluated_exactly_seat_by_seat():
    goal, faces, holds = 7, 3, [2, 4, 3]
    rs = small_pig(goal, faces)
    sol = solve_nplayer(rs, 3)
    sp = sol.space
    V = evaluate_profile(sp, 3, [HoldAt(sp, h) for h in holds])
    ref = reference_holds(goal, faces, holds)
    moves = Moves(rs)
    worst = 0.0
    for k in range(3):
        for s in product(range(goal), repeat=3):
            xs = [moves.normalise(PlayerState(v)) for v in s]
            worst = max(worst, float(np.max(np.abs(V[k][sol.index(xs)] - ref[(k, s, 0)]))))
    assert worst <= 1e-12
    # one decider for every seat drops the seat index and agrees with the per-seat form
    same = evaluate_profile(sp, 3, [HoldAt(sp, 3)])
    each = evaluate_profile(sp, 3, [HoldAt(sp, 3)] * 3)
    assert same.shape[0] == 1 and np.allclose(same[0], each[0], atol=1e-13) and np.allclose(each[1], each[0])


@pytest.mark.parametrize("name", ["overtaking-bolts", "barrel-push-off", "dump-opening"])
def test_mixed_sweeps_reach_the_plain_sweeps_values(name):
    """Where penalties send players down and the levels are swept again, the evaluation's
    Anderson-mixed sweeps reach the values the plain sweeps reach (a lineup of a seat holding
    at 10 among equilibrium players)."""
    rs = tiny.solved(TINY_DUELS, name)[0]
    sol = solve_nplayer(rs, 3)
    assert sol.game.lowers
    lineup = [HoldAt(sol.space, 2), EquilibriumDecider(sol), EquilibriumDecider(sol)]
    mixed = evaluate_profile(sol.space, 3, lineup)
    plain = evaluate_profile(sol.space, 3, lineup, accelerate=False)
    assert np.max(np.abs(mixed - plain)) <= 1e-12


def test_the_equilibrium_played_is_the_equilibrium():
    sol = solve_nplayer(load_ruleset("pig", ("goal=30",)), 3)
    assert not sol.mixed
    V = evaluate_profile(sol.space, 3, [EquilibriumDecider(sol)])
    assert np.max(np.abs(V[0] - sol.V)) <= 1e-12


@pytest.fixture(scope="module")
def pig40(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("tables"))
    rs = load_ruleset("pig", ("goal=40",))
    sol = solve_nplayer(rs, 3)
    race = solve_objective(rs, "race", d, progress=False)
    duel = solve_objective(rs, "duel", d, progress=False)
    return rs, sol, race, duel, d


def test_approximations_lose_against_the_equilibrium_and_the_product_least(pig40):
    rs, sol, race, duel, _d = pig40
    sp = sol.space
    x0 = Moves(rs).normalise(Moves(rs).initial())
    s0 = sol.index([x0] * 3)
    eq = sol.V[s0]
    turns, P = race_turns(sp, race), duel_matrix(sp, duel)
    worst = {}
    for dec in (ProductDecider(sp, P, 2), DuelDecider(sp, P, 2), RaceDecider(sp, turns), FinishDecider(sp, turns, 2)):
        every = evaluate_profile(sp, 3, [dec])[0][s0]
        assert abs(every.sum() - 1) < 1e-12
        losses = []
        for k in range(3):
            lineup = [EquilibriumDecider(sol)] * 3
            lineup[k] = dec
            got = evaluate_profile(sp, 3, lineup)[0][s0]
            # no seat gains by leaving an equilibrium
            assert got[k] <= eq[k] + 1e-12
            losses.append(eq[k] - got[k])
        worst[dec.name] = max(losses)
    assert worst["product"] < worst["duel"] and worst["product"] < worst["race"]


def test_the_finish_plan_is_beaten_by_replanning_against_racers(pig40):
    """Against opponents who do play the race policy, U(x0, 0) is the value of the best
    plan fixed now (by the opponents' turns since); the finish decider replans each turn
    with their states in view, so it does at least as well, and no better than the exact
    best response (the race seat's value in the duel against a best responder)."""
    rs, sol, race, duel, _d = pig40
    sp = sol.space
    turns = race_turns(sp, race)
    fin, rd = FinishDecider(sp, turns, 1), RaceDecider(sp, turns)
    i0 = sp.lookup(Moves(rs).normalise(Moves(rs).initial()))
    m = len(sp)
    got = evaluate_profile(sp, 2, [fin, rd])[0][i0 * m + i0][0]
    plan = fin.times.layers(np.array([[i0]]), down_to=0)[i0, 0]
    assert plan <= got + 1e-12
    # the survival chain: the expected turns alone are the sum of the survival function
    assert abs(fin.times.S[i0].sum() - turns[i0]) < 1e-9


def test_players_table_round_trip_and_checks(tmp_path):
    rs = load_ruleset("pig", ("goal=20",))
    sol = solve_players(rs, 3, tmp_path)
    assert sol.solved_now and sol.meta["certificate"] <= 1e-9
    again = solve_players(rs, 3, tmp_path)
    assert not again.solved_now
    direct = solve_nplayer(rs, 3)
    assert np.array_equal(np.asarray(again.table.values), direct.V)
    assert np.allclose(again.seat_values(), direct.start, atol=0)
    # fair compensation: each later seat's head start brings its chance nearest to 1/3
    for k, (_c, p) in enumerate(again.fair_compensation(), start=1):
        x0 = Moves(rs).normalise(Moves(rs).initial())
        for d in range(0, rs.goal):
            states = [x0] * 3
            states[k] = Moves(rs).normalise(PlayerState(d)) if d else x0
            assert abs(p - 1 / 3) <= abs(again.value(states)[k] - 1 / 3) + 1e-15
    folder = again.table.path
    # a table whose certificate is missing or too large is refused, and so are edited values
    bad = tmp_path / "bad"
    shutil.copytree(folder, bad / folder.name)
    meta = json.loads((bad / folder.name / "meta.json").read_text())
    meta["certificate"] = 1e-3
    (bad / folder.name / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(TableError, match="certificate"):
        load_table(bad / folder.name, rs, objective(3))
    with pytest.raises(TableError, match="holds objective"):
        load_table(folder, rs, objective(4))
    with pytest.raises(StateError, match="3 players"):
        again.value([PlayerState(0)] * 2)


def test_players_refused_in_one_line_before_any_work(tmp_path):
    with pytest.raises(NPlayerError, match="GB of values"):
        solve_players(load_ruleset("classic"), 3, tmp_path)
    with pytest.raises(NPlayerError, match="GB of values"):  # equal_turns: seats in the state
        solve_players(load_ruleset("pig", ("equal_turns=true",)), 4, tmp_path)
    with pytest.raises(NPlayerError, match="GB of values"):
        solve_players(load_ruleset("farkle"), 4, tmp_path)
    assert not any(tmp_path.iterdir())


def test_solve_players_cli(tmp_path):
    r = CliRunner().invoke(
        main, ["solve", "pig", "--set", "goal=20", "--players", "3", "--tables", str(tmp_path), "--json"]
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    direct = solve_nplayer(load_ruleset("pig", ("goal=20",)), 3).start
    assert np.allclose(d["seat_values"], direct, atol=1e-15) and d["certificate"] <= 1e-9
    assert [f["seat"] for f in d["fair_compensation"]] == [2, 3]
    r = CliRunner().invoke(main, ["solve", "pig", "--set", "goal=20", "--players", "3", "--tables", str(tmp_path)])
    assert r.exit_code == 0 and "from the stored table" in r.output and "certificate" in r.output
    r = CliRunner().invoke(main, ["solve", "classic", "--players", "3", "--tables", str(tmp_path)])
    assert r.exit_code == 2 and "GB of values" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = CliRunner().invoke(main, ["solve", "pig", "--players", "3", "--objective", "race"])
    assert r.exit_code == 2
    r = CliRunner().invoke(main, ["solve", "pig"])
    assert r.exit_code == 2 and "--players N" in r.stderr


def test_advise_three_players_exact(tmp_path):
    """The exact advice's values are the reference value iteration's (goal 8, four faces)."""
    goal, faces = 8, 4
    sets = ["--set", f"goal={goal}", "--set", f"faces={faces}", "--set", "scoring.singles={}"] + [
        a for f in range(2, faces + 1) for a in ("--set", f"scoring.singles.{f}={f}")
    ]
    r = CliRunner().invoke(
        main,
        [
            "advise",
            "pig",
            *sets,
            "--me",
            "2",
            "--opp",
            "5",
            "--opp",
            "1",
            "--turn",
            "3",
            "--tables",
            str(tmp_path),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    (part,) = d["advice"]
    assert part["exact"] and "against 2 players who all play their best" in part["method"]
    ref = reference_pig(goal, faces, 3)
    val = {o["action"]: o["win_probability"] for o in part["options"]}
    assert abs(val["stop"] - ref[((5, 1, 5), 0)][2]) < 1e-12
    assert abs(val["roll"] - ref[((2, 5, 1), 3)][0]) < 1e-12


def test_advise_three_players_approximation(tmp_path, monkeypatch):
    """Pig to 100 for three players is a million states: not solved on request; the
    approximation read off the duel table is used (the product of the two duels, or the
    duel against the strongest, whichever measured better), its values the duel table's."""
    import thousand.advice.costs

    def costs(product: float, duel: float):
        case = {"ruleset": "pig-50", "preset": "pig", "goal": 50, "players": 3, "dice": 1}
        return lambda: [{**case, "losses": {"product": [product] * 3, "duel": [duel] * 3}}]

    def advice_part(out: str) -> dict:
        missing, part = json.loads(out)["advice"]
        assert "options" not in missing and missing["method"].startswith("No exact advice")
        return part

    d = str(tmp_path)
    rs = load_ruleset("pig")
    duel = solve_objective(rs, "duel", d, progress=False)
    args = ["advise", "pig", "--me", "60", "--opp", "90", "--opp", "30", "--turn", "12", "--tables", d, "--json"]
    x, y1, y2 = PlayerState(72), PlayerState(90), PlayerState(30)
    monkeypatch.setattr(thousand.advice.costs, "measured_cases", costs(0.001, 0.002))
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    part = advice_part(r.stdout)
    assert not part["exact"] and "multiplied" in part["method"] and part["value"] == "duel_product"
    assert "gave up 0.1% of winning chance, on pig to 50, 3 players" in part["method"]
    assert "This game is longer than any measured (up to 50)" in part["method"]
    stop = next(o for o in part["options"] if o["action"] == "stop")
    assert abs(stop["duel_product"] - (1 - duel.value(y1, x)) * (1 - duel.value(y2, x))) < 1e-12
    monkeypatch.setattr(thousand.advice.costs, "measured_cases", costs(0.002, 0.001))
    part = advice_part(CliRunner().invoke(main, args).stdout)
    assert "strongest opponent, opponent 1" in part["method"] and part["value"] == "estimated_win_probability"
    stop = next(o for o in part["options"] if o["action"] == "stop")
    assert abs(stop["estimated_win_probability"] - (1 - duel.value(y1, x))) < 1e-12
    r = CliRunner().invoke(
        main,
        [
            "advise",
            "pig",
            "--me",
            "60",
            "--opp",
            "90",
            "--opp",
            "30",
            "--opp-bolts",
            "1",
            "--opp-bolts",
            "0",
            "--opp-bolts",
            "0",
            "--tables",
            d,
        ],
    )
    assert r.exit_code == 2 and "--opp-bolts is given 3 times for 2 opponents" in r.stderr


def test_play_three_players_uses_the_equilibrium(tmp_path):
    tables = str(tmp_path / "tables")
    r = CliRunner().invoke(
        main,
        ["play", "pig", "--set", "goal=20", "--players", "A", "B", "C", "--tables", tables],
        input="roll 6\nroll 4\nstop\nhint\n",
    )
    assert r.exit_code == 0, r.output
    assert "Exact: the best play against 2 players who all play their best." in r.output
    assert "% to win" in r.output
    assert (tmp_path / "tables" / f"{load_ruleset('pig', ('goal=20',)).hash}-players3").is_dir()


@pytest.mark.twin
def test_tiny_three_player_pig_in_exact_fractions():
    """Pig to 5 with a three-faced die (1 busts, 2 and 3 score), three players: the solver's
    decisions, read off its values, are evaluated in exact fractions (levels from the top,
    each rotation orbit closed in one division), and then every decision is checked to be
    a best response in exact arithmetic; the solver's values are those fractions to 1e-15."""
    from fractions import Fraction as F

    goal, faces, N = 5, 3, 3
    rs = small_pig(goal, faces)
    sol = solve_nplayer(rs, N)
    moves = Moves(rs)

    def fval(s):
        return sol.V[sol.index([moves.normalise(PlayerState(v)) for v in s])]

    def rot(v):  # the next state's vector as seen from this mover
        return (v[-1],) + tuple(v[:-1])

    def add(u, v, c=F(1)):
        return tuple(a + c * b for a, b in zip(u, v))

    win = (F(1),) + (F(0),) * (N - 1)
    zero = (F(0),) * N
    exact: dict = {}

    def hold_value(s, t):
        return win if s[0] + t >= goal else rot(exact[s[1:] + (s[0] + t,)])

    def turn(s, hold):
        """(C, beta): V(s, 0) = C + beta * rot(V(sigma s, 0)), under the decisions ``hold``."""
        C, B = {}, {}
        for t in range(goal - s[0] + faces, -1, -1):
            if s[0] + t >= goal:
                C[t], B[t] = win, F(0)
            elif t > 0 and hold(s, t):
                C[t], B[t] = hold_value(s, t), F(0)
            else:
                c, b = zero, F(1, faces)
                for f in range(2, faces + 1):
                    c, b = add(c, C[t + f], F(1, faces)), b + B[t + f] / faces
                C[t], B[t] = c, b
        return C, B

    def solver_holds(s, t):
        # the solver's decision: hold where banking is worth at least rolling on (its tie rule)
        bank = 1.0 if s[0] + t >= goal else float(np.roll(fval(s[1:] + (s[0] + t,)), 1)[0])
        return bank >= roll_value(s, t) - 1e-13

    def roll_value(s, t):
        z = np.roll(fval(s[1:] + (s[0],)), 1)[0]
        out = z / faces
        for f in range(2, faces + 1):
            u = t + f
            if s[0] + u >= goal:
                out += 1.0 / faces
            else:
                out += max(float(np.roll(fval(s[1:] + (s[0] + u,)), 1)[0]) if u > 0 else -1, roll_value(s, u)) / faces
        return out

    for level in range(N * (goal - 1), -1, -1):
        for s in product(range(goal), repeat=N):
            if sum(s) != level or s in exact:
                continue
            orbit = [s]
            while (nxt := orbit[-1][1:] + (orbit[-1][0],)) != s:
                orbit.append(nxt)
            parts = [turn(o, solver_holds) for o in orbit]
            L = len(orbit)
            for r in range(L):
                num, prod = zero, F(1)
                for j in range(N):
                    C, B = parts[(r + j) % L]
                    v = C[0]
                    for _k in range(j):
                        v = rot(v)
                    num, prod = add(num, v, prod), prod * B[0]
                exact[orbit[r]] = tuple(x / (1 - prod) for x in num)
    worst = max(float(np.max(np.abs(fval(s) - np.array([float(x) for x in v])))) for s, v in exact.items())
    assert worst <= 1e-15
    # every decision of the solver is a best response, exactly: no seat gains by the other action
    for s in exact:
        C, B = turn(s, solver_holds)
        z = rot(exact[s[1:] + (s[0],)])
        for t in range(1, goal - s[0]):
            held = hold_value(s, t)[0]
            rolled = C[t][0] + B[t] * z[0] if not solver_holds(s, t) else None
            if rolled is None:  # the solver holds: rolling on must not be worth more
                roll_C, roll_B = zero, F(1, faces)
                for f in range(2, faces + 1):
                    roll_C, roll_B = add(roll_C, C[t + f], F(1, faces)), roll_B + B[t + f] / faces
                assert roll_C[0] + roll_B * z[0] <= held
            else:
                assert rolled >= held
    assert sum(exact[(0, 0, 0)]) == 1 and exact[(0, 0, 0)][0] > exact[(0, 0, 0)][1] > exact[(0, 0, 0)][2]


def test_evaluate_players_exact_and_monte_carlo(tmp_path):
    """A hold-at bot in each seat against equilibrium players: its enumerated turns give
    the same chances as the turn DP's hold-at decisions (two separate paths), and the Monte
    Carlo games agree within their intervals."""
    from thousand.analysis.bots import load_bot
    from thousand.analysis.seats import equilibrium, exact_seats, mc_seats

    rs = load_ruleset("pig", ("goal=16",))
    sol = equilibrium(rs, 3, str(tmp_path), progress=False)
    bot = load_bot("hold:6", rs, "duel", str(tmp_path), 1, 2.0, {})
    got, asked = exact_seats(sol, bot)
    assert asked > 0
    s0 = sol.index([Moves(rs).normalise(Moves(rs).initial())] * 3)
    for k in range(3):
        lineup = [EquilibriumDecider(sol)] * 3
        lineup[k] = HoldAt(sol.space, 6)
        assert abs(got[k] - evaluate_profile(sol.space, 3, lineup)[0][s0][k]) < 1e-12
        assert got[k] < sol.start[k]
    mc = mc_seats(sol, bot, 3000, seed=5)
    for k, r in enumerate(mc):
        lo, hi = r["ci95"]
        assert r["games"] == 1000 and lo - 0.01 <= got[k] <= hi + 0.01


def test_evaluate_players_cli(tmp_path):
    r = CliRunner().invoke(
        main,
        [
            "evaluate",
            "pig",
            "--set",
            "goal=16",
            "--players",
            "3",
            "--bot",
            "hold:6",
            "--games",
            "300",
            "--tables",
            str(tmp_path),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert len(d["exact"]["seats"]) == 3 and len(d["monte_carlo"]["seats"]) == 3
    assert all(b < e for b, e in zip(d["exact"]["seats"], d["equilibrium_seats"]))
    r = CliRunner().invoke(
        main,
        [
            "evaluate",
            "pig",
            "--set",
            "goal=16",
            "--players",
            "3",
            "--bot",
            "hold:6",
            "--opponent",
            "race",
            "--tables",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 2 and "--opponent" in r.stderr
    r = CliRunner().invoke(main, ["evaluate", "classic", "--players", "3", "--bot", "hold:300"])
    assert r.exit_code == 2 and "GB of values" in r.stderr


def test_the_equilibrium_values_each_option_as_its_table_does(tmp_path):
    """The values the blunder count gives a bot's options (the turn solved against the
    equilibrium's end values) and the equilibrium table agree at the start of a game of
    Pig: the mover's chance is a sixth of its chance after a 1 (the turn lost: its chance
    as the third to move from the start) plus a sixth of the best option after each other
    face."""
    from thousand.analysis.bots import BotState
    from thousand.analysis.oracle import EquilibriumOracle
    from thousand.analysis.seats import players_table
    from thousand.engine.turn import TurnEnd, TurnRules

    rs = load_ruleset("pig", ("goal=16",))
    table = players_table(rs, 3, str(tmp_path), progress=False)
    oracle = EquilibriumOracle(table)
    engine = TurnRules(rs)
    x0 = engine.moves.normalise(engine.moves.initial())
    start = table.value([x0] * 3)
    total = start[2] / 6
    for face in range(2, 7):
        rolled = engine.after_roll(engine.start(x0), [face])
        assert not isinstance(rolled, TurnEnd)
        state = BotState.at(engine, rolled, x0, (x0,))
        vals = oracle.values(state)
        assert len(vals) == 2  # keep the face, then roll on or stop
        total += max(vals) / 6
        lost, _v, best = oracle.loss(state, state.legal[int(np.argmin(vals))])
        assert lost == pytest.approx(max(vals) - min(vals), abs=1e-15) and best == oracle.best(state)
    assert total == pytest.approx(start[0], abs=1e-12)


def test_evaluate_players_lists_the_worst_decisions_and_refuses_large_exact_work_at_once(tmp_path):
    """Three players: the bot's decisions in the first games valued by the equilibrium,
    the worst with the advise command that shows them (which agrees on what was lost);
    an exact evaluation past its budget is refused before it starts, saying what would do."""
    args = ["evaluate", "pig", "--set", "goal=16", "--players", "3", "--bot", "hold:6", "--tables", str(tmp_path)]
    r = CliRunner().invoke(main, [*args, "--games", "300", "--blunder-games", "60", "--worst", "3", "--json"])
    assert r.exit_code == 0, r.output
    b = json.loads(r.stdout)["blunders"]
    assert b["decisions"] > b["not_optimal"] > 0 and 0 < len(b["worst"]) <= 3
    worst = b["worst"][0]
    assert worst["given_up"] >= b["worst"][-1]["given_up"] > 0
    assert worst["advise"].count("--opp") == 2
    shown = CliRunner().invoke(main, [*shlex.split(worst["advise"])[1:], "--tables", str(tmp_path), "--json"])
    assert shown.exit_code == 0, shown.output
    options = json.loads(shown.stdout)["advice"][0]["options"]
    values = {(tuple(o["keep"]), o["then"].split()[0]): o["win_probability"] for o in options}
    bot, best = worst["bot"], worst["best"]
    lost = values[(tuple(best["keep"]), best["then"])] - values[(tuple(bot["keep"]), bot["then"])]
    assert lost == pytest.approx(worst["given_up"], abs=1e-12)
    r = CliRunner().invoke(main, [*args, "--games", "30", "--budget", "10"])
    assert r.exit_code == 0, r.output
    assert "exact: skipped (about" in r.output and "--budget" in r.output and "worst decisions" in r.output


def test_measured_costs_are_quoted_only_for_games_of_the_same_kind(monkeypatch):
    """A cost is read off the measurements of games of the same kind -- as many players,
    equal turns alike, the same family of rules -- and says when the game at hand is longer
    than every one measured; the approximation with the smaller worst loss is chosen."""
    import thousand.advice.costs as costs
    from thousand.advice.policy import _least

    fake = [
        {"ruleset": "pig-50", "preset": "pig", "goal": 50, "players": 3, "dice": 1,
         "losses": {"product": [0.001, 0.002], "duel": [0.01, 0.02], "race": [0.1, 0.2]}},
        {"ruleset": "plain-500", "preset": "plain", "goal": 500, "players": 3, "dice": 5,
         "losses": {"product": [0.003, 0.004], "duel": [0.0005, 0.0006], "race": [0.05, 0.06]}},
        {"ruleset": "classic-150", "preset": "classic", "goal": 150, "players": 3, "dice": 5, "interactions": True,
         "losses": {"product": [0.002, 0.0022], "duel": [0.0025, 0.003]}},
    ]  # fmt: skip
    monkeypatch.setattr(costs, "measured_cases", lambda: fake)
    pig, plain, classic = load_ruleset("pig"), load_ruleset("plain"), load_ruleset("classic")
    got = {m: costs.measured_cost(m, plain, 3) for m in ("product", "duel", "race")}
    assert _least(got, "product") == "duel"
    assert _least({m: costs.measured_cost(m, pig, 3) for m in got}, "x") == "product"
    race = got["race"]
    assert (race.low, race.high, race.where) == (0.05, 0.06, ("plain to 500, 3 players",))
    assert "gave up 5.0% to 6.0% of winning chance" in race.words() and "longer" in race.words()
    short = costs.measured_cost("race", load_ruleset("plain", ("goal=400",)), 3)
    assert not short.longer and "longer" not in short.words()
    # another family, another number of players, equal turns: not measured, nothing quoted
    assert costs.measured_cost("race", classic, 3) is None
    assert costs.measured_cost("product", plain, 4) is None
    assert costs.measured_cost("product", load_ruleset("plain", ("equal_turns=true",)), 3) is None
    assert costs.measured_cost("product", load_ruleset("farkle"), 3) is None
    # 0.2% and 0.22% both read 0.2%: one figure, not "0.2% to 0.2%"
    assert (
        "gave up 0.2% of winning chance, on classic to 150, 3 players"
        in costs.measured_cost("product", classic, 3).words()
    )


def test_memoryless_opponents_advice(tmp_path):
    """The memoryless-opponent approximation for three players and more: against one
    opponent it is the six-dice duel's approximation (thousand.solvers.geometric); its advice at the
    start of a turn is the turn DP of its decider (thousand.solvers.approx.MemorylessDecider), seat
    by seat under equal_turns, where a win before the last seat keeps its exact value."""
    from thousand import kernel
    from thousand.solvers.advice import duel_advisor, memoryless_advisor
    from thousand.solvers.approx import MemorylessDecider
    from thousand.solvers.nplayer import NPlayerGame
    from thousand.storage.geometric import geometric_duel

    rs = load_ruleset("pig", ("goal=10",))
    geo = geometric_duel(rs, str(tmp_path), progress=False)
    x, y = PlayerState(3), PlayerState(6)
    a = duel_advisor(geo, y).advise(x, 5, 1, None)
    b = memoryless_advisor(geo, [y]).advise(x, 5, 1, None)
    assert [o.value for o in a.options] == pytest.approx([o.value for o in b.options], abs=1e-12)
    rs = load_ruleset("pig", ("goal=6", "equal_turns=true"))
    geo = geometric_duel(rs, str(tmp_path), progress=False)
    game = NPlayerGame(rs, 3)
    dec = MemorylessDecider(game, geo)
    st, m = game.space.states, game.m
    worst = 0.0
    for seat in range(3):
        for s in range(0, game.total, 11):
            i, rest = s // m**2, s % m**2
            stop, bust, win = dec.decide(i, np.array([rest]), seat)
            sp = game.turn_space(seat)
            want = kernel.turn_dp(game.table, sp.stop_ok[i], stop, sp.forced_ok[i], stop, bust, win).start[0]
            got = memoryless_advisor(geo, [st[rest // m], st[rest % m]], seat).advise(st[i], 0, 1, None).best.value
            worst = max(worst, abs(got - want))
    assert worst <= 1e-12
    with pytest.raises(StateError, match="which seat"):
        memoryless_advisor(geo, [st[0], st[1]])


def test_equal_turns_advice_chooses_by_the_seat(monkeypatch):
    """Without the exact equilibrium of an equal_turns game the advice takes, of the race
    and the memoryless opponent, the one with the smaller worst loss measured in seats like
    the mover's (the last of the round, or an earlier one), and quotes that range."""
    import thousand.advice.costs as costs
    from thousand.advice.policy import _least

    cases = [
        {"ruleset": "a", "preset": "pig", "goal": 30, "players": 3, "equal_turns": True,
         "losses": {"race": [0.09, 0.05, 0.01], "memoryless": [0.0, 0.01, 0.06]}},
        {"ruleset": "b", "preset": "pig", "goal": 30, "players": 3, "equal_turns": False,
         "losses": {"race": [0.5, 0.5, 0.0]}},
    ]  # fmt: skip
    monkeypatch.setattr(costs, "measured_cases", lambda: cases)
    rs = load_ruleset("pig", ("goal=30", "equal_turns=true"))
    last = {m: costs.measured_cost(m, rs, 3, seat_last=True) for m in ("memoryless", "race")}
    assert _least(last, "memoryless") == "race" and (last["race"].low, last["race"].high) == (0.01, 0.01)
    assert "Measured in the last seat: one player using it among exact players gave up 1.0%" in last["race"].words(
        "the last seat"
    )
    early = {m: costs.measured_cost(m, rs, 3, seat_last=False) for m in ("memoryless", "race")}
    assert _least(early, "race") == "memoryless" and early["memoryless"].words().count("less than 0.05% to 1.0%") == 1
    monkeypatch.setattr(costs, "measured_cases", lambda: [])
    assert _least({m: costs.measured_cost(m, rs, 3, seat_last=False) for m in ("memoryless", "race")}, "x") == "x"


def test_the_optimal_bot_plays_the_advice_and_gives_up_nothing_among_equilibrium_players(tmp_path):
    """``optimal`` among three players plays what the advice layer advises; with the
    equilibrium's table at hand that is the equilibrium, so its exact chance in every seat
    is the equilibrium's own (evaluated through the bot's enumerated turns, a separate path
    from the solver's)."""
    from thousand.analysis.seats import evaluate_players

    rs = load_ruleset("pig", ("goal=10",))
    rep = evaluate_players(rs, "optimal", 3, games=0, tables_dir=str(tmp_path), progress=False)
    got, eq = rep["json"]["exact"]["seats"], rep["json"]["equilibrium_seats"]
    assert got == pytest.approx(eq, abs=1e-12) and abs(sum(eq) - 1) < 1e-12


@pytest.mark.parametrize("sets, seat", [(("goal=12",), None), (("goal=8", "equal_turns=true"), 1)])
def test_every_players_chance_after_each_option(tmp_path, sets, seat):
    """Exact advice of three players gives each option every player's chance (the mover's
    first, then the opponents in the order they move): they sum to 1, the mover's is the
    option's value, and stopping gives the table's own vector of the banked state (read
    straight off the table, rotated to the mover first)."""
    import random

    from thousand.advice.policy import Advisor
    from thousand.advice.situation import Situation
    from thousand.storage.players import solve_players

    rs = load_ruleset("pig", sets)
    sol = solve_players(rs, 3, str(tmp_path))
    advisor = Advisor(rs, "auto", str(tmp_path))
    rnd = random.Random(7)
    checked = 0
    for _k in range(40):
        me, o1, o2 = (PlayerState(rnd.randrange(rs.goal)) for _j in range(3))
        total = rnd.choice([0, *range(2, rs.goal - me.score + 6)])  # a 1 ends the turn: no total of 1
        sit = Situation(rs, me, (o1, o2), seat=seat, turn_total=total, dice=1)
        (part,) = advisor.advise(sit)
        assert part.exact and part.method == "equilibrium"
        for o in part.advice.options:
            c = np.asarray(o.detail["chances"])
            assert abs(c.sum() - 1) < 1e-12 and abs(c[0] - o.value) < 1e-12
            if o.action == "stop" and me.score + total < rs.goal:
                after = sol.value([o1, o2, PlayerState(me.score + total)], (seat or 0) + 1)
                assert np.allclose(c, np.roll(after, 1), atol=1e-12, rtol=0)
                checked += 1
    assert checked >= 5
    out = CliRunner().invoke(
        main,
        ["advise", "pig", *[a for s in sets for a in ("--set", s)], "--me", "3", "--opp", "5", "--opp", "1"]
        + (["--seat", "second"] if seat else [])
        + ["--turn", "2", "--tables", str(tmp_path), "--json"],
    )
    assert out.exit_code == 0, out.output
    options = json.loads(out.stdout)["options"]
    assert all(len(o["chances"]) == 3 and abs(o["chances"][0] - o["win_probability"]) < 1e-12 for o in options)


def test_a_mixed_state_is_named_by_every_players_state_and_its_weight(tmp_path):
    """``solve --players N --json`` lists the states where the mover mixes: a state's row of
    the table decoded back into the players' states (mover first) and its seat."""
    from thousand.storage.players import solve_players

    for sets, seats in ((("goal=12",), 1), (("goal=8", "equal_turns=true"), 3)):
        sol = solve_players(load_ruleset("pig", sets), 3, str(tmp_path))
        x = [PlayerState(5), PlayerState(0), PlayerState(7)]
        seat = seats - 1
        got = sol.mixed_state(sol.flat(x, seat), 0.25)
        assert got["scores"] == [5, 0, 7] and got["weight"] == 0.25
        assert got["seat"] == (seats if seats > 1 else None)
    r = CliRunner().invoke(
        main, ["solve", "pig", "--set", "goal=12", "--players", "3", "--tables", str(tmp_path), "--json"]
    )
    assert r.exit_code == 0 and json.loads(r.stdout)["mixed"] == []  # Pig to 12 mixes nowhere


def test_a_mixed_orbit_is_the_one_equilibrium_an_independent_enumeration_finds(tmp_path):
    """Three-player Pig to 70 mixes at 12 states. Its export names both policies of each
    and the weight, and docs/check_pig_equilibrium.py (Pig's turn written from the rules,
    NumPy only) finds them the rules' best turns at the breakpoint and every seat's chance
    their mixture. docs/pig_orbit_equilibria.py, which tries every combination of pure
    policies and of mixtures at the breakpoints of the orbit (38, 8, 9) -> (8, 9, 38) ->
    (9, 38, 8) against the file's values elsewhere, finds one equilibrium: two movers
    mixing, the solver's rows to rounding."""
    import subprocess
    import sys

    out = tmp_path / "pig70.npz"
    r = CliRunner().invoke(
        main,
        ["tables", "export", "pig", "--set", "goal=70", "--players", "3", "--out", str(out), "--tables", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    data = np.load(out)
    assert data["mixed"].shape == (12, 2) and data["mixed_options"].shape == (12, 2, 4)
    # the two policies differ (else nothing mixes): the one above busts more often
    assert np.all(data["mixed_options"][:, 1, 0] > data["mixed_options"][:, 0, 0])
    docs = Path(__file__).resolve().parents[1] / "docs"
    done = subprocess.run(
        [sys.executable, str(docs / "check_pig_equilibrium.py"), str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("12 mixed states:"))
    named, mixture = (float(x) for x in re.findall(r"within ([0-9.e+-]+)", line))
    assert named < 1e-12 and mixture < 1e-12
    done = subprocess.run(
        [sys.executable, str(docs / "pig_orbit_equilibria.py"), str(out), "38,8,9"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "\n1 equilibrium:" in done.stdout, done.stdout
    rows = [x for x in done.stdout.splitlines() if x.startswith("  (")]
    assert len(rows) == 3 and sum("mixes" in x for x in rows) == 2
    assert all(float(re.search(r"row is ([0-9.e+-]+) away", x).group(1)) < 1e-12 for x in rows)


def test_an_exported_equilibrium_checks_with_the_standalone_script(tmp_path):
    """``thousand tables export`` writes the equilibrium so that docs/check_pig_equilibrium.py
    (NumPy only, Pig's turn written from the rules) finds every state's chances summing to 1
    and every mover's chance its best one-turn answer to the file's values."""
    import subprocess
    import sys

    out = tmp_path / "pig.npz"
    args = ["tables", "export", "pig", "--set", "goal=20", "--players", "3", "--out", str(out)]
    r = CliRunner().invoke(main, [*args, "--tables", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["states"] == 20**3  # the scores 0 to 19 of each player
    data = np.load(out)
    assert data["values"].shape == (20**3, 3) and int(data["players"]) == 3 and "goal = 20" in str(data["ruleset"])
    script = Path(__file__).resolve().parents[1] / "docs" / "check_pig_equilibrium.py"
    done = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    sums, gap, seats = (float(x) for x in re.findall(r"within ([0-9.e+-]+)", done.stdout.splitlines()[-1]))
    assert sums < 1e-12 and gap < 1e-12 and seats < 1e-12
    # a state whose mover's chance is altered by 1e-6 is caught
    bad = dict(data)
    bad["values"] = data["values"].copy()
    bad["values"][1234] += np.array([1e-6, -1e-6, 0.0])
    np.savez(tmp_path / "bad.npz", **bad)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "bad.npz")], capture_output=True, text=True)
    assert float(re.findall(r"within ([0-9.e+-]+)", done.stdout.splitlines()[-1])[1]) > 5e-7
    # and a state whose other seats' chances are swapped (still summing to 1) by the third check
    bad["values"] = data["values"].copy()
    bad["values"][2345, [1, 2]] = bad["values"][2345, [2, 1]] + np.array([0.0, 1e-9])
    bad["values"][2345, 1] -= 1e-9
    np.savez(tmp_path / "bad.npz", **bad)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "bad.npz")], capture_output=True, text=True)
    got = [float(x) for x in re.findall(r"within ([0-9.e+-]+)", done.stdout.splitlines()[-1])]
    assert got[2] > 1e-9 or abs(data["values"][2345, 1] - data["values"][2345, 2]) < 1e-9
    # bad input: one line, exit 2
    for wrong, says in ((["--players", "2"], "3 players or more"), (["--out", str(tmp_path / "x.csv")], ".npz")):
        r = CliRunner().invoke(
            main, ["tables", "export", "pig", "--set", "goal=20", "--players", "3", "--out", str(out), *wrong]
        )
        assert r.exit_code == 2 and says in r.stderr, r.output
