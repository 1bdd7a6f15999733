"""A bot in a game of three players and more, rated against equilibrium players: the
report of ``thousand evaluate RULES --players N``.

The bot takes each seat in turn; the other seats play the exact equilibrium of N players
(:mod:`thousand.storage.players`, solved or loaded). The bot's chance in each seat is set beside
the equilibrium's own chance there; the difference is what the bot gives up.

* Exact: every turn of the bot is enumerated forward over the rolls with their exact
  probabilities (:class:`thousand.analysis.exact.PolicyTurns`; the bot is asked once per decision
  state and sees every opponent), the equilibrium seats' turns come from the turn DP, and
  the game is valued level by level in closed form with the bot's seat tracked
  (:func:`thousand.solvers.profile.evaluate_profile`).
* Monte Carlo (beyond the decision budget, or on request): games with seeded dice, the
  bot's turns played through :class:`thousand.engine.TurnRules`, the equilibrium seats'
  turn ends drawn from their exact end distributions; 95% Wilson intervals.
"""

from __future__ import annotations

import random
import sys
import time

import numpy as np

from thousand import kernel
from thousand.base.errors import TableError, ThousandError
from thousand.base.i18n import _
from thousand.engine.states import build_state_space
from thousand.engine.turn import GameStep, TurnEnd, TurnRules, next_turn, still_to_play
from thousand.rules.ruleset import Ruleset
from thousand.solvers.advice import last_turn_advisor
from thousand.solvers.approx import _digits
from thousand.solvers.nplayer import NPlayerError, NPlayerSolution, turn_ends
from thousand.solvers.profile import EquilibriumDecider, evaluate_profile
from thousand.storage.players import PlayersSolution, solve_players

from .blunders import Blunders
from .bots import load_bot
from .evaluate import report_blunders
from .exact import EXACT_BUDGET, BudgetExceeded, PolicyTurns, _turn_end
from .montecarlo import play_game, play_turn, wilson
from .oracle import EquilibriumOracle

__all__ = [
    "SAMPLED_TURNS",
    "BotSeat",
    "EquilibriumTurns",
    "decisions_estimate",
    "equilibrium",
    "equilibrium_of",
    "evaluate_players",
    "exact_seats",
    "exact_seats_round",
    "game_chances",
    "mc_seats",
    "players_table",
]


class BotSeat:
    """The bot's turns, enumerated: (A, b) of every state straight from its end distribution."""

    name = "bot"

    def __init__(self, space, turns: PolicyTurns, opponents: int):
        self.space, self.turns, self.n = space, turns, opponents
        self.moves = turns.engine.moves

    def turn_ends(self, i: int, rest: np.ndarray, Vnext: np.ndarray, game):
        x = self.space.states[i]
        m, N, u = game.m, game.N, game.rs.unit
        succ, rows, win_rows = game.successors(i, rest)
        row_of = {int(t): r for r, t in enumerate(rows)}
        wins = {int(t) for t in win_rows}
        T = int(self.space.T[i])
        ys = _digits(rest, m, self.n)
        A, b = np.zeros((len(rest), N)), np.zeros(len(rest))
        for c, row in enumerate(ys):
            opp = [self.space.states[j] for j in row]
            for (kind, t), p in self.turns.ends(x, opp[0], tuple(opp[1:])).items():
                if kind == "bust":
                    b[c] += p
                elif kind == "win":
                    A[c, 0] += p
                else:
                    # a bank or a mid-turn end at t (totals past the horizon end as at it, as
                    # in the turn DP): the game's end rows say what it does to every player
                    tu = min(t // u, T)
                    if tu in wins:
                        A[c, 0] += p
                    else:
                        A[c] += p * np.roll(Vnext[succ[row_of[tu], c]], 1)
        return A, b


def _what_fits(rs: Ruleset, players: int) -> str:
    """What an evaluation against equilibrium players can do instead: a goal whose states
    fit the N-player solver (the player states grow about as the goal does), or the duel."""
    from thousand.engine.states import TooManyStates, closure
    from thousand.solvers.nplayer import MAX_VALUES, seat_count

    fits = (MAX_VALUES / (seat_count(rs, players) * players)) ** (1 / players)
    try:
        m = len(closure(rs, opponents=True, limit=100_000))
    except TooManyStates as many:
        m = many.count
    goal = max(rs.unit, int(rs.goal * min(1.0, fits / m)) // (10 * rs.unit) * 10 * rs.unit)
    try:
        from thousand.rules.ruleset import from_mapping

        from_mapping({**rs.to_mapping(), "goal": goal})
    except ThousandError:  # the goal alone cannot move (a barrel, pits above it): no command to offer
        return _(
            "about {fits:,} player states fit {n} players here: try a shorter game of your own (a ruleset "
            "file with a goal near {goal} and its barrel and pits below it), or the bot against one optimal "
            "opponent (without --players)"
        ).format(fits=int(fits), n=players, goal=goal)
    return _(
        "about {fits:,} player states fit {n} players here: try a shorter game (--set goal={goal} or less), "
        "or the bot against one optimal opponent (without --players)"
    ).format(fits=int(fits), n=players, goal=goal)


def players_table(rs: Ruleset, players: int, tables_dir: str | None, progress: bool) -> PlayersSolution:
    """The stored equilibrium (solved if missing); where it cannot be held here, the
    refusal says what would work."""
    try:
        return solve_players(rs, players, tables_dir, progress=progress)
    except NPlayerError as exc:
        raise NPlayerError(f"{exc}; {_what_fits(rs, players)}") from None


def equilibrium_of(table: PlayersSolution) -> NPlayerSolution:
    """The equilibrium table as the solver's result type (its player states checked)."""
    rs, players = table.rs, table.players
    space = build_state_space(rs, opponents=True)
    if not np.array_equal(space.encode(), np.asarray(table.table.states)):
        # load_table checked the ruleset's hash: only a table of another model version gets here
        raise TableError(
            _("table {0}: its player states are not this ruleset's; solve it again with --force").format(
                table.table.path
            )
        )
    return NPlayerSolution(
        rs,
        players,
        space,
        np.asarray(table.table.values),
        table.meta["certificate"],
        table.meta["solve_seconds"],
        table.meta["iterations"],
        {int(k): w for k, w in table.meta.get("mixed", [])},
    )


def equilibrium(rs: Ruleset, players: int, tables_dir: str | None, progress: bool) -> NPlayerSolution:
    """:func:`equilibrium_of` the :func:`players_table`."""
    return equilibrium_of(players_table(rs, players, tables_dir, progress))


SAMPLED_TURNS = 12  # the bot's turns enumerated to estimate an exact evaluation before it starts


def decisions_estimate(sol: NPlayerSolution, bot) -> tuple[float, float]:
    """The decision states an exact evaluation would ask the bot about, roughly, and the
    seconds it would take: the bot's turns in a few sampled game states (the start, then
    random ones) enumerated, their mean decision states times the game states, and the
    time those took per decision state. It overcounts (not every state is reached), so
    the caller refuses only well past its budget; cheap next to the evaluation itself."""
    N, m = sol.players, sol.m
    engine = TurnRules(sol.rs)
    probe = PolicyTurns(engine, bot, budget=10**9, horizon=sol.game.horizon if sol.rs.equal_turns else None, players=N)
    rng = random.Random(0)
    states = sol.space.states
    x0 = engine.moves.normalise(engine.moves.initial())
    sample = [(x0,) * N] + [tuple(states[rng.randrange(m)] for _ in range(N)) for _ in range(SAMPLED_TURNS - 1)]
    t0 = time.perf_counter()
    for x, *opp in sample:
        probe.ends(x, opp[0], tuple(opp[1:]), seat=0 if sol.rs.equal_turns else None)
    seconds = time.perf_counter() - t0
    asked = max(len(probe.answers), 1)
    per_turn = asked / len(sample)
    # with equal turns the bot plays each seat of the round: its turns differ by seat
    reached = float(m) ** N * (N if sol.rs.equal_turns else 1)
    return per_turn * reached, seconds / asked * per_turn * reached


def exact_seats(sol: NPlayerSolution, bot, budget: int = EXACT_BUDGET) -> tuple[np.ndarray, int]:
    """The bot's exact chance in each seat against equilibrium players, and the decision
    states it was asked about (:class:`BudgetExceeded` past ``budget``)."""
    N = sol.players
    turns = PolicyTurns(TurnRules(sol.rs), bot, budget=budget)
    seat = BotSeat(sol.space, turns, N - 1)
    eq = EquilibriumDecider(sol)
    moves = TurnRules(sol.rs).moves
    start = sol.index([moves.normalise(moves.initial())] * N)
    out = np.empty(N)
    for k in range(N):
        lineup = [eq] * N
        lineup[k] = seat
        out[k] = evaluate_profile(sol.space, N, lineup)[0][start][k]
    return out, len(turns.answers)


def exact_seats_round(sol: NPlayerSolution, bot, budget: int = EXACT_BUDGET) -> tuple[np.ndarray, int]:
    """:func:`exact_seats` for ``equal_turns`` games, where a bot may play a last turn: the
    game enumerated forward from the start as an absorbing Markov chain over (every
    player's state, the seat to move, the finished seats and their final totals),

        W(g) = sum_e p_g(e) [ win share of the bot if e ends the game, else W(next(g, e)) ],

    the bot's turns by :class:`thousand.analysis.exact.PolicyTurns` (asked once per decision state,
    with its seat and, in a last turn, the total to beat), the others' from their exact end
    distributions (:class:`EquilibriumTurns`), the game's course by
    :func:`thousand.engine.next_turn`; one sparse solve per seat of the bot. Past
    ``budget`` game states or decision states: :class:`BudgetExceeded`."""
    N = sol.players
    engine = TurnRules(sol.rs)
    turns = PolicyTurns(engine, bot, budget=budget, horizon=sol.game.horizon, players=N)
    eq = EquilibriumTurns(sol)
    out = np.empty(N)
    for k in range(N):

        def ends(step, seat):
            opp = [step.players[(step.mover + j) % N] for j in range(1, N)]
            if step.mover != k:
                return eq.ends(step.players[step.mover], opp, seat, step.to_beat, step.tied)
            dist = turns.ends(step.players[step.mover], opp[0], tuple(opp[1:]), seat, step.to_beat, step.tied)
            return [(_turn_end(engine, step.players[step.mover], kind, t), p) for (kind, t), p in dist.items()]

        out[k] = game_chances(engine, N, ends, budget)[k]
    return out, len(turns.answers)


def game_chances(engine: TurnRules, players: int, ends, budget: int) -> np.ndarray:
    """Every seat's chance of winning from the start (a top shared by k worth 1/k each),
    where ``ends(step, seat)`` lists the :class:`TurnEnd` of the mover's turn with their
    probabilities at the :class:`thousand.engine.GameStep` ``step``: the absorbing chain
    over the steps reached, solved exactly (sparse LU)."""
    from scipy import sparse
    from scipy.sparse import linalg as spla

    moves = engine.moves
    seated = bool(engine.rs.equal_turns)
    start = GameStep(None, (moves.normalise(moves.initial()),) * players)
    index = {start: 0}
    todo = [start]
    rows, cols, vals = [], [], []
    won: dict = {}
    while todo:
        step = todo.pop()
        i = index[step]
        for end, p in ends(step, step.mover if seated else None):
            nxt = next_turn(moves, step, end)
            if nxt.winners is not None:
                w = won.setdefault(i, np.zeros(players))
                w[list(nxt.winners)] += p / len(nxt.winners)
                continue
            j = index.get(nxt)
            if j is None:
                j = index[nxt] = len(index)
                todo.append(nxt)
                if len(index) > budget:
                    raise BudgetExceeded
            rows.append(i)
            cols.append(j)
            vals.append(p)
    n = len(index)
    A = (sparse.identity(n, format="csc") - sparse.csc_matrix((vals, (rows, cols)), shape=(n, n))).tocsc()
    R = np.zeros((n, players))
    for i, w in won.items():
        R[i] = w
    try:
        V = spla.splu(A).solve(R)
    except RuntimeError:
        V = np.full((n, players), np.nan)
    if not np.all(np.isfinite(V)) or np.max(np.abs(A @ V - R)) > 1e-8:
        raise NPlayerError(
            _(
                "the exact evaluation's linear system is singular: some game never ends "
                "under these bots (a bot that never banks?)"
            )
        )
    return V[0]


class EquilibriumTurns:
    """The equilibrium seats' turn ends, drawn from their exact end distributions (cached).

    Before the last round a seat plays the equilibrium's decisions (with ``equal_turns``
    those of its seat, whose turns run to the final totals' horizon before the last seat);
    in a last turn, the decisions that maximise its own chance of the round's top with the
    players after it doing the same (:func:`thousand.solvers.advice.last_turn_advisor`)."""

    def __init__(self, sol: NPlayerSolution):
        self.sol, self.dec = sol, EquilibriumDecider(sol)
        self.moves = TurnRules(sol.rs).moves
        self.table = kernel.roll_table(sol.rs)
        self._cache: dict = {}
        self._last: dict = {}

    def draw(
        self, rng: random.Random, x, opponents, seat: int | None = None, to_beat: int | None = None, tied: int = 0
    ) -> TurnEnd:
        """One turn end of the equilibrium player ``x`` against ``opponents`` (in the order
        they move next), as :func:`thousand.analysis.montecarlo.play_game` asks for it."""
        ends, cum = self._distribution(x, opponents, seat, to_beat, tied)
        return ends[min(int(np.searchsorted(cum, rng.random(), side="right")), len(ends) - 1)][0]

    def ends(
        self, x, opponents, seat: int | None = None, to_beat: int | None = None, tied: int = 0
    ) -> list[tuple[TurnEnd, float]]:
        """The turn ends of ``x`` (as :meth:`draw`) with their probabilities."""
        return self._distribution(x, opponents, seat, to_beat, tied)[0]

    def _distribution(self, x, opponents, seat, to_beat, tied):
        key = (x, tuple(opponents), seat, to_beat, tied)
        got = self._cache.get(key)
        if got is None:
            ends, p = self._ends(x, opponents, seat, to_beat, tied)
            keep = p > 0
            got = self._cache[key] = (
                [(e, float(q)) for e, q, k in zip(ends, p, keep) if k],
                np.cumsum(p[keep]) / p.sum(),
            )
        return got

    def _ends(self, x, opponents, seat, to_beat, tied):
        sol, u = self.sol, self.sol.rs.unit
        norm = self.moves.normalise
        if to_beat is None:
            c = seat or 0
            sp = sol.game.turn_space(c)
            i = sol.space.lookup(norm(x))
            rest = 0
            for y in opponents:
                rest = rest * sol.m + sol.space.lookup(norm(y))
            _v, stop_p, bust_p, win_p = turn_ends(self.table, sp, i, *self.dec.decide(i, np.array([rest]), seat=c))
            e, T = sp.ends[i], int(sp.T[i])
            stop_p, bust_p, win_p = stop_p[:, 0], bust_p[0], win_p[0]
        else:
            later = still_to_play(opponents, seat)
            adv = self._last.get((to_beat, tied, later))
            if adv is None:
                adv = self._last[(to_beat, tied, later)] = last_turn_advisor(sol.rs, to_beat, tied, later)
            st = adv.solve_turn(x)
            e, T = st.ends, st.ends.T
            sp_, fp, bp, wp = kernel.end_distribution(self.table, e.stop_ok, st.stop_v, e.forced_ok, st.forced_v, st.tv)
            stop_p, bust_p, win_p = sp_[:, 0] + fp[:, 0], bp[0], wp[0]
        ends = [
            TurnEnd("forced", t * u, e.forced_event[t]) if e.forced_ok[t] else TurnEnd("stop", t * u)
            for t in range(T + 1)
        ] + [TurnEnd("bust"), TurnEnd("win")]
        return ends, np.concatenate([stop_p, [bust_p, win_p]])


def mc_seats(
    sol: NPlayerSolution, bot, games: int, seed: int, blunders: Blunders | None = None, blunder_games: int = 0
) -> list[dict]:
    """``games`` games, the bot in seat ``g % N`` of game g: per seat, its wins (a top shared
    by k counts 1/k) and games (:func:`thousand.analysis.montecarlo.play_game`). In the
    first ``blunder_games`` games every decision of the bot is valued into ``blunders``."""
    N = sol.players
    engine = TurnRules(sol.rs)
    rng = random.Random(seed)
    eq = EquilibriumTurns(sol)
    wins, played = np.zeros(N), np.zeros(N, dtype=int)
    for g in range(games):
        k = g % N
        bot.new_game()
        record = blunders.record if blunders is not None and g < blunder_games else None

        def turn(mover, states, seat, to_beat, tied):
            opp = [states[(mover + j) % N] for j in range(1, N)]
            if mover == k:
                return play_turn(
                    engine,
                    rng,
                    bot,
                    states[mover],
                    opp[0],
                    on_decision=record,
                    others=tuple(opp[1:]),
                    seat=seat,
                    to_beat=to_beat,
                    tied=tied,
                )
            return eq.draw(rng, states[mover], opp, seat, to_beat, tied)

        winners = play_game(engine, N, turn)
        if record is not None:
            blunders.end_game()
        played[k] += 1
        wins[k] += 1.0 / N if winners is None else (1.0 / len(winners) if k in winners else 0.0)
    return [
        {
            "seat": k + 1,
            "games": int(played[k]),
            "wins": float(wins[k]),
            "p_win": float(wins[k] / played[k]) if played[k] else None,
            "ci95": list(wilson(wins[k], int(played[k]))),
        }
        for k in range(N)
    ]


def evaluate_players(
    rs: Ruleset,
    bot_spec: str,
    players: int,
    games: int = 3000,
    seed: int = 1,
    exact: bool = True,
    budget: int = EXACT_BUDGET,
    timeout: float = 2.0,
    tables_dir: str | None = None,
    progress: bool = True,
    blunder_games: int = 500,
    worst: int = 5,
    overrides: tuple[str, ...] = (),
) -> dict:
    """The whole report: {'json': ..., 'text': ...} (the module docstring)."""
    table = players_table(rs, players, tables_dir, progress)
    sol = equilibrium_of(table)
    eq = [float(v) for v in sol.start]
    bot = load_bot(bot_spec, rs, "duel", tables_dir, seed, timeout, {}, players=players)
    try:
        out = {
            "ruleset": rs.name,
            "ruleset_hash": rs.hash,
            "players": players,
            "bot": bot.name,
            "equilibrium_seats": eq,
            "certificate": sol.certificate,
        }
        lines = [
            f"{rs.name}, {players} players: bot {bot.name} in each seat in turn, the others playing the "
            f"equilibrium (P(win) of the bot's seat)"
        ]
        if exact:
            _exact_part(sol, bot, budget, eq, progress, out, lines)
        else:
            out["exact"] = {"skipped": "--no-exact"}
        if games:
            blunders = Blunders(EquilibriumOracle(table), keep=worst)
            _monte_carlo_part(sol, bot, games, seed, blunders, blunder_games, eq, out, lines)
            if blunders.decisions:
                # valued by the equilibrium: what the bot gave up against equilibrium players
                where = f"in the first {len(blunders.per_game)} simulated games, valued by the equilibrium"
                report_blunders(rs, blunders, where, "duel", overrides, True, out, lines)
        return {"json": out, "text": "\n".join(lines)}
    finally:
        bot.close()


def _exact_part(sol: NPlayerSolution, bot, budget: int, eq: list[float], progress: bool, out: dict, lines: list):
    """The bot's exact chance in each seat, where its decision states fit ``budget``; an
    estimate first, so that an evaluation too large is refused at once, saying what would do."""
    players = sol.players
    if not bot.deterministic:
        return _skipped(f"bot {bot.name} is not deterministic", out, lines)
    est, seconds = decisions_estimate(sol, bot)
    if est > 2 * budget:
        from thousand.base.progress import duration_text

        return _skipped(
            f"about {est:,.0f} decision states (sampled) exceed the budget of {budget:,}; "
            f"--budget {_round_up(est * 1.5):,} would evaluate it in roughly {duration_text(seconds)}, "
            f"or --no-exact for Monte Carlo only",
            out,
            lines,
        )
    if progress:
        from thousand.base.progress import duration_text

        sys.stderr.write(
            f"exact evaluation: about {est:,.0f} decision states of the bot, roughly {duration_text(seconds)}\n"
        )
        sys.stderr.flush()
    t0 = time.perf_counter()
    try:
        # with equal turns the bot may play a last turn of the round: the game enumerated
        ex, asked = (exact_seats_round if sol.rs.equal_turns else exact_seats)(sol, bot, budget)
    except BudgetExceeded:
        return _skipped(f"more than {budget:,} decision states", out, lines)
    except NPlayerError as e:
        return _skipped(str(e), out, lines)
    took = time.perf_counter() - t0
    out["exact"] = {"seats": [float(v) for v in ex], "decisions": asked, "seconds": round(took, 3)}
    lines.append("exact:")
    for k in range(players):
        lines.append(f"  seat {k + 1}: bot {ex[k]:.6f}, equilibrium {eq[k]:.6f}, given up {eq[k] - ex[k]:+.6f}")
    lines.append(
        f"  mean given up over the seats: {float(np.mean(np.array(eq) - ex)):+.6f} "
        f"({asked:,} decision states, {took:.1f} s)"
    )


def _round_up(x: float) -> int:
    """``x`` rounded up to two significant digits (a budget a person types)."""
    step = 10 ** max(int(np.floor(np.log10(max(x, 1.0)))) - 1, 0)
    return int(-(-x // step) * step)


def _skipped(why: str, out: dict, lines: list) -> None:
    out["exact"] = {"skipped": why}
    lines.append(f"exact: skipped ({why}); Monte Carlo only")


def _monte_carlo_part(sol, bot, games, seed, blunders, blunder_games, eq, out: dict, lines: list) -> None:
    t0 = time.perf_counter()
    mc = mc_seats(sol, bot, games, seed, blunders, blunder_games)
    out["monte_carlo"] = {"games": games, "seed": seed, "seats": mc, "seconds": round(time.perf_counter() - t0, 3)}
    lines.append(f"Monte Carlo, {games:,} games (seed {seed}):")
    for r in mc:
        lo, hi = r["ci95"]
        lines.append(
            f"  seat {r['seat']}: bot {r['p_win']:.4f} (95% {lo:.4f} to {hi:.4f}) in "
            f"{r['games']:,} games, equilibrium {eq[r['seat'] - 1]:.4f}"
        )
