"""thousand evaluate on equal_turns duels (docs/rules.md section 7): the bot's seat, the
second seat's last turn against the first seat's final total, ties worth 1/2.

The exact evaluation is checked three ways: optimal play evaluated through the bots'
path equals the duel table (a different code path: turns enumerated through the rules of
a turn in play, not the kernel's DP); two hold bots equal an exact-fraction recursion
written here from the rules alone; Monte Carlo games fall within their intervals.
"""

import json
from fractions import Fraction

import pytest
import tiny
from click.testing import CliRunner
from reference import solve_linear
from tiny import TINY_EQUAL_TURNS

from thousand.analysis.bots import BotState, load_bot
from thousand.analysis.evaluate import run_evaluation
from thousand.analysis.exact import exact_duel
from thousand.analysis.montecarlo import wilson
from thousand.analysis.oracle import Oracle
from thousand.cli import main
from thousand.engine import TurnEnd, TurnRules, finish_turn
from thousand.rules import from_mapping, load_ruleset


def oracle_of(name):
    rs, _sol = tiny.solved(TINY_EQUAL_TURNS, name)
    return rs, Oracle(rs, "duel", progress=False)


@pytest.mark.parametrize("name", sorted(TINY_EQUAL_TURNS))
def test_optimal_play_through_the_bots_path_is_the_table(name):
    rs, o = oracle_of(name)
    bot = load_bot("optimal", rs, "duel", oracles={"duel": o})
    v = o.solution.start_value()
    for opp in (None, bot):  # the optimal opponent's turns from the kernel, or asked as a bot
        ex = exact_duel(TurnRules(rs), bot, opp, o)
        assert ex.value_first == pytest.approx(v, abs=1e-10)
        assert ex.value_second == pytest.approx(1 - v, abs=1e-10)


# --------------------------------------------------------------------------- two hold bots, by hand


def hold_duel(N: int, M: int) -> tuple[Fraction, Fraction]:
    """P(hold:N beats hold:M) moving first and second on ``equal-pig-like`` (one die: 1-3
    bust, 4 and 5 score 5, 6 scores 10; goal 20; equal turns), from the rules alone.

    A hold bot stops once its turn total reaches its N or its bank reaches the goal; in its
    last turn, once its bank reaches the total to beat (a tie is worth 1/2). Scores below
    the goal are 0, 5, 10, 15; the unknowns V(a, b, w, s) are the chance that the bot
    (score a, seat s) wins with w = 0 the bot to move, 1 the opponent."""
    goal, steps = 20, ((Fraction(1, 3), 5), (Fraction(1, 6), 10))  # and a bust with 1/2

    def turn(score, stop):
        """{total banked: p} of a turn that stops at the first total t with stop(t); the rest busts."""
        out: dict = {}

        def go(t, p):
            for q, d in steps:
                t2 = t + d
                if stop(t2):
                    out[t2] = out.get(t2, 0) + p * q
                else:
                    go(t2, p * q)

        go(0, Fraction(1))
        return out

    def last_turn(score, F):
        """The chance a last turn from ``score`` beats F (a tie 1/2); it stops on reaching F."""
        return sum((p if score + t > F else p / 2) for t, p in turn(score, lambda t: score + t >= F).items())

    scores = (0, 5, 10, 15)
    keys = [(a, b, w, s) for a in scores for b in scores for w in (0, 1) for s in (0, 1)]
    ix = {k: i for i, k in enumerate(keys)}
    A = [[Fraction(int(i == j)) for j in range(len(keys))] for i in range(len(keys))]
    rhs = [Fraction(0)] * len(keys)
    for (a, b, w, s), i in ix.items():
        mover, other, hold = (a, b, N) if w == 0 else (b, a, M)
        seat = s if w == 0 else 1 - s
        ends = turn(mover, lambda t: t >= hold or mover + t >= goal)
        bust = 1 - sum(ends.values())
        after_bust = (a, b, 1 - w, s)
        A[i][ix[after_bust]] -= bust
        for t, p in ends.items():
            if mover + t >= goal:
                if seat == 1:  # the round is complete: the mover wins
                    rhs[i] += p if w == 0 else 0
                else:  # the other seat's last turn against F
                    beaten = last_turn(other, mover + t)
                    rhs[i] += p * (1 - beaten if w == 0 else beaten)
            else:
                nxt = (a + t, b, 1, s) if w == 0 else (a, b + t, 0, s)
                A[i][ix[nxt]] -= p
    V = solve_linear(A, rhs)
    return V[ix[(0, 0, 0, 0)]], V[ix[(0, 0, 1, 1)]]


@pytest.mark.twin
@pytest.mark.parametrize("N,M", [(10, 10), (5, 15), (15, 0)])
def test_two_hold_bots_equal_the_recursion_by_hand(N, M):
    rs, o = oracle_of("equal-pig-like")
    first, second = hold_duel(N, M)
    ex = exact_duel(TurnRules(rs), load_bot(f"hold:{N}", rs), load_bot(f"hold:{M}", rs), o)
    assert ex.value_first == pytest.approx(float(first), abs=1e-12)
    assert ex.value_second == pytest.approx(float(second), abs=1e-12)


def test_hold_exact_agrees_with_monte_carlo_and_the_optimum_gives_up_nothing():
    rs = from_mapping(TINY_EQUAL_TURNS["equal-overtaking-bolts"])
    rep = run_evaluation(rs, "hold:10", "optimal", games=4000, seed=5, progress=False, blunder_games=200)
    ex, mc = rep["exact"], rep["mc"]
    for k, n, v in (
        (mc.first_wins, mc.first_games, ex.value_first),
        (mc.second_wins, mc.second_games, ex.value_second),
    ):
        lo, hi = wilson(k, n)
        assert lo <= v <= hi
    opt = rep["json"]["exact"]["optimum"]
    assert ex.value_first < opt and ex.value_second < 1 - opt
    assert rep["blunders"].total > 0
    rep = run_evaluation(rs, "optimal", "optimal", games=300, seed=2, progress=False)
    assert rep["exact"].value_first == pytest.approx(opt, abs=1e-10)
    assert rep["blunders"].decisions > 0 and rep["blunders"].mistakes == 0
    assert "faults" not in rep["json"]


def _asked(rs):
    """The decision states a hold bot sees in a few equal-turns games."""
    from thousand.analysis.montecarlo import mc_duel

    seen = []

    class Spy:
        deterministic = True

        def decide(self, state):
            seen.append(state)
            return state.legal[0]

    from thousand.analysis.bots import PythonBot

    bot = PythonBot(Spy(), "spy")
    mc_duel(TurnRules(rs), bot, load_bot("hold:10", rs), 40, 3)
    return seen


def test_the_bots_see_their_seat_and_the_total_to_beat():
    rs = from_mapping(TINY_EQUAL_TURNS["equal-pig-like"])
    seen = _asked(rs)
    assert {st.seat for st in seen} == {0, 1}
    last = [st for st in seen if st.to_beat is not None]
    assert last and all(st.seat == 1 and st.tied == 1 and st.to_beat >= rs.goal for st in last)
    # the finished player is shown with its final total
    assert all(st.opponent.score == st.to_beat for st in last)
    js = last[0].to_json()
    assert js["seat"] == 1 and js["to_beat"] == last[0].to_beat and js["tied"] == 1
    json.dumps(js)
    # without equal turns there is no seat
    pig = load_ruleset("pig", ("goal=20",))
    e = TurnRules(pig)
    s = e.after_roll(e.start(e.moves.initial()), (4,))
    st = BotState.at(e, s, e.moves.initial())
    assert st.seat is None and st.to_beat is None and st.to_json()["seat"] is None


def test_a_winning_bank_changes_nobody_else():
    # docs/rules.md section 7: the later seats play their last turns from their scores as they stand
    rs = load_ruleset("plain", ("goal=300", "equal_turns=true", "overtake=50"))
    m = TurnRules(rs).moves
    x, y = m.initial()._replace(score=250), m.initial()._replace(score=280)
    res = finish_turn(m, (x, y), 0, TurnEnd("stop", 100))
    assert res.won and res.final_total == 350 and res.players[1] == y and res.affected == ()
    # a bank short of the goal still overtakes
    res = finish_turn(m, (x, y), 0, TurnEnd("stop", 40))
    assert res.players[1].score == 230


def test_cli_evaluates_an_equal_turns_duel_and_its_advice_commands_run(tmp_path):
    r = CliRunner()
    base = ["--set", "goal=20", "--set", "equal_turns=true"]
    res = r.invoke(
        main,
        [
            "evaluate",
            "pig",
            *base,
            "--bot",
            "hold:6",
            "--games",
            "600",
            "--worst",
            "40",
            "--tables",
            str(tmp_path),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.splitlines()[-1])
    assert 0 < data["exact"]["value_first"] < data["exact"]["optimum"]
    worst = data["blunders"]["worst"]
    assert any("--to-beat" in w["advise"] for w in worst) and any("--seat" in w["advise"] for w in worst)
    for w in worst:
        if "--to-beat" in w["advise"] or "--seat" in w["advise"]:
            args = w["advise"].split()[2:]  # after "thousand advise"
            out = r.invoke(main, ["advise", *args, "--tables", str(tmp_path), "--json"])
            assert out.exit_code == 0, (w["advise"], out.output)
            # the advice shows the loss the evaluation reported
            opts = json.loads(out.stdout.splitlines()[-1])["options"]
            best = max(o["win_probability"] for o in opts)
            played = next(
                o["win_probability"]
                for o in opts
                if o.get("keep") == w["bot"]["keep"] and o["then"].startswith(w["bot"]["then"])
            )
            assert best - played == pytest.approx(w["given_up"], abs=1e-9)


# --------------------------------------------------------------------------- three players


@pytest.fixture(scope="module")
def pig10_three(tmp_path_factory):
    from thousand.analysis.seats import equilibrium

    d = str(tmp_path_factory.mktemp("tables"))
    rs = load_ruleset("pig", ("goal=10", "equal_turns=true"))
    return rs, equilibrium(rs, 3, d, progress=False), d


def _all_equilibrium(sol):
    from thousand.analysis.seats import EquilibriumTurns, game_chances

    eq, N = EquilibriumTurns(sol), sol.players
    return game_chances(
        TurnRules(sol.rs),
        N,
        lambda st, seat: eq.ends(
            st.players[st.mover], [st.players[(st.mover + j) % N] for j in range(1, N)], seat, st.to_beat, st.tied
        ),
        10**7,
    )


def test_the_enumerated_round_of_equilibrium_players_is_the_solvers(pig10_three):
    # the game walked forward (the rules of a turn in play, last turns by their own turn DPs,
    # the top and its ties counted at the end of the round) against the solver's closed form
    _rs, sol, _d = pig10_three
    assert _all_equilibrium(sol) == pytest.approx(sol.start, abs=1e-12)


@pytest.mark.parametrize("name", ["pig-16", pytest.param("overtaking-bolts", marks=pytest.mark.slow)])
def test_enumerated_and_profile_evaluation_agree_without_equal_turns(name):
    # two separate exact paths: the game walked forward step by step, and the solver's
    # level-by-level evaluation of fixed decisions (with overtaking and bolts in the second)
    from tiny import TINY_DUELS

    from thousand.analysis.seats import exact_seats, exact_seats_round
    from thousand.solvers.nplayer import solve_nplayer

    rs = load_ruleset("pig", ("goal=16",)) if name == "pig-16" else tiny.solved(TINY_DUELS, name)[0]
    sol = solve_nplayer(rs, 3)
    bot = load_bot("hold:6" if name == "pig-16" else "hold:10", rs)
    assert exact_seats_round(sol, bot)[0] == pytest.approx(exact_seats(sol, bot)[0], abs=1e-12)


class _HoldInSeat:
    """The hold-at decisions as a decider of :func:`thousand.solvers.profile.evaluate_profile`: a
    bank that wins or reaches ``k`` is worth 1, a smaller one -1, so the turn DP banks there."""

    def __init__(self, game, k):
        self.game, self.k = game, k

    def decide(self, i, rest, seat=0):
        import numpy as np

        from thousand.engine.states import WIN_INDEX

        sp = self.game.turn_space(seat)
        T = int(sp.T[i])
        stop = np.where(np.arange(T + 1) >= self.k, 1.0, -1.0)[:, None] * np.ones((1, len(rest)))
        stop[sp.stop_idx[i] == WIN_INDEX] = 1.0
        return stop, np.zeros(len(rest)), np.ones(len(rest))


def test_a_bot_in_every_seat_of_an_equal_turns_game(pig10_three):
    from thousand.analysis.seats import exact_seats_round, mc_seats
    from thousand.engine.player import Moves
    from thousand.solvers.profile import EquilibriumDecider, evaluate_profile

    rs, sol, _d = pig10_three
    bot = load_bot("hold:4", rs)
    got, asked = exact_seats_round(sol, bot)
    assert asked > 0 and all(got < sol.start)
    # in the first seat the bot never plays a last turn: the solver's profile evaluation,
    # which gives later seats their optimal last turns, values it too
    lineup = [_HoldInSeat(sol.game, 4), EquilibriumDecider(sol), EquilibriumDecider(sol)]
    x0 = Moves(rs).normalise(Moves(rs).initial())
    assert evaluate_profile(sol.space, 3, lineup)[0][sol.index([x0] * 3)][0] == pytest.approx(got[0], abs=1e-12)
    for k, r in enumerate(mc_seats(sol, bot, 3000, seed=5)):
        lo, hi = r["ci95"]
        assert r["games"] == 1000 and lo <= got[k] <= hi


def test_cli_evaluates_three_players_with_equal_turns(pig10_three):
    _rs, sol, d = pig10_three
    r = CliRunner().invoke(
        main,
        [
            "evaluate",
            "pig",
            "--set",
            "goal=10",
            "--set",
            "equal_turns=true",
            "--players",
            "3",
            "--bot",
            "hold:4",
            "--games",
            "300",
            "--tables",
            d,
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["equilibrium_seats"] == pytest.approx(list(sol.start), abs=1e-12)
    assert all(b < e for b, e in zip(data["exact"]["seats"], data["equilibrium_seats"]))
    assert [s["games"] for s in data["monte_carlo"]["seats"]] == [100, 100, 100]
