"""A bot in a game of three players and more, rated against equilibrium players: the
report of ``thousand evaluate RULES --players N``.

The bot takes each seat in turn; the other seats play the exact equilibrium of N players
(:mod:`thousand.players`, solved or loaded). The bot's chance in each seat is set beside
the equilibrium's own chance there; the difference is what the bot gives up.

* Exact: every turn of the bot is enumerated forward over the rolls with their exact
  probabilities (:class:`thousand.exact.PolicyTurns`; the bot is asked once per decision
  state and sees every opponent), the equilibrium seats' turns come from the turn DP, and
  the game is valued level by level in closed form with the bot's seat tracked
  (:func:`thousand.nplayer.evaluate_profile`).
* Monte Carlo (beyond the decision budget, or on request): games with seeded dice, the
  bot's turns played through :class:`thousand.engine.TurnRules`, the equilibrium seats'
  turn ends drawn from their exact end distributions; 95% Wilson intervals.
"""

from __future__ import annotations

import random
import time

import numpy as np

from . import kernel
from .approx import _digits
from .bots import load_bot
from .engine import MAX_TURNS, TurnEnd, TurnRules, finish_turn
from .exact import EXACT_BUDGET, BudgetExceeded, PolicyTurns
from .game import WIN
from .montecarlo import play_turn, wilson
from .nplayer import EquilibriumDecider, NPlayerError, NPlayerSolution, evaluate_profile, turn_ends
from .players import solve_players
from .errors import TableError
from .i18n import _
from .rules import Ruleset
from .states import build_state_space


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


def equilibrium(rs: Ruleset, players: int, tables_dir: str | None, progress: bool) -> NPlayerSolution:
    """The stored equilibrium (solved if missing) as the solver's result type."""
    table = solve_players(rs, players, tables_dir, progress=progress)
    space = build_state_space(rs, opponents=True)
    if not np.array_equal(space.encode(), np.asarray(table.table.states)):
        # load_table checked the ruleset's hash: only a table of another model version gets here
        raise TableError(_("table {0}: its player states are not this ruleset's; solve it again with "
                           "--force").format(table.table.path))
    return NPlayerSolution(rs, players, space, np.asarray(table.table.values), table.meta["certificate"],
                           table.meta["solve_seconds"], table.meta["iterations"],
                           {int(k): w for k, w in table.meta.get("mixed", [])})


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


class EquilibriumTurns:
    """The equilibrium seats' turn ends, drawn from their exact end distributions (cached per state)."""

    def __init__(self, sol: NPlayerSolution):
        self.sol, self.dec = sol, EquilibriumDecider(sol)
        self.table = kernel.roll_table(sol.rs)
        self._cache: dict = {}

    def draw(self, rng: random.Random, i: int, rest: int) -> TurnEnd:
        key = (i, rest)
        got = self._cache.get(key)
        if got is None:
            sol, sp = self.sol, self.sol.space
            r = np.array([rest])
            _v, stop_p, bust_p, win_p = turn_ends(self.table, sp, i, *self.dec.decide(i, r))
            e = sp.ends[i]
            ends = [TurnEnd("forced", t * sol.rs.unit, e.forced_event[t]) if e.forced_ok[t]
                    else TurnEnd("stop", t * sol.rs.unit) for t in range(int(sp.T[i]) + 1)] + \
                [TurnEnd("bust"), TurnEnd("win")]
            p = np.concatenate([stop_p[:, 0], bust_p, win_p])
            got = self._cache[key] = (ends, np.cumsum(p) / p.sum())
        ends, cum = got
        return ends[min(int(np.searchsorted(cum, rng.random(), side="right")), len(ends) - 1)]


def mc_seats(sol: NPlayerSolution, bot, games: int, seed: int) -> list[dict]:
    """``games`` games, the bot in seat ``g % N`` of game g: per seat, its wins and games."""
    N, m = sol.players, sol.m
    engine = TurnRules(sol.rs)
    moves = engine.moves
    rng = random.Random(seed)
    eq = EquilibriumTurns(sol)
    x0 = moves.normalise(moves.initial())
    wins, played = np.zeros(N), np.zeros(N, dtype=int)
    for g in range(games):
        k = g % N
        bot.new_game()
        states = [x0] * N
        mover, winner = 0, None
        for _turn in range(MAX_TURNS):
            order = [(mover + j) % N for j in range(1, N)]
            if mover == k:
                opp = [states[j] for j in order]
                end = play_turn(engine, rng, bot, states[mover], opp[0], others=tuple(opp[1:]))
            else:
                rest = 0
                for j in order:
                    rest = rest * m + sol.space.lookup(states[j])
                end = eq.draw(rng, sol.space.lookup(states[mover]), rest)
            after = finish_turn(moves, states, mover, end)
            if after.won:
                winner = mover
                break
            states = list(after.players)
            mover = (mover + 1) % N
        played[k] += 1
        wins[k] += 1.0 if winner == k else (1.0 / N if winner is None else 0.0)
    return [{"seat": k + 1, "games": int(played[k]), "wins": float(wins[k]),
             "p_win": float(wins[k] / played[k]) if played[k] else None,
             "ci95": list(wilson(wins[k], int(played[k])))} for k in range(N)]


def evaluate_players(rs: Ruleset, bot_spec: str, players: int, games: int = 3000, seed: int = 1,
                     exact: bool = True, budget: int = EXACT_BUDGET, timeout: float = 2.0,
                     tables_dir: str | None = None, progress: bool = True) -> dict:
    """The whole report: {'json': ..., 'text': ...} (the module docstring)."""
    if rs.equal_turns:
        # the bots, their exact valuation and the simulator here know no seats and no last round
        raise NPlayerError(_("{0} plays equal turns: evaluate --players does not rate bots in equal_turns games "
                             "yet").format(rs.name))
    sol = equilibrium(rs, players, tables_dir, progress)
    eq = [float(v) for v in sol.start]
    bot = load_bot(bot_spec, rs, "duel", tables_dir, seed, timeout, {})
    try:
        out = {"ruleset": rs.name, "ruleset_hash": rs.hash, "players": players, "bot": bot.name,
               "equilibrium_seats": eq, "certificate": sol.certificate}
        lines = [f"{rs.name}, {players} players: bot {bot.name} in each seat in turn, the others playing the "
                 f"equilibrium (P(win) of the bot's seat)"]
        ex = None
        if exact:
            t0 = time.perf_counter()
            try:
                ex, asked = exact_seats(sol, bot, budget)
                out["exact"] = {"seats": [float(v) for v in ex], "decisions": asked,
                                "seconds": round(time.perf_counter() - t0, 3)}
            except BudgetExceeded:
                out["exact"] = {"skipped": f"more than {budget:,} decision states"}
                lines.append(f"exact: skipped (more than {budget:,} decision states); Monte Carlo only")
            except NPlayerError as e:
                out["exact"] = {"skipped": str(e)}
                lines.append(f"exact: skipped ({e}); Monte Carlo only")
        if ex is not None:
            for k in range(players):
                lines.append(f"  seat {k + 1}: bot {ex[k]:.6f}, equilibrium {eq[k]:.6f}, given up "
                             f"{eq[k] - ex[k]:+.6f}")
            lines.append(f"  mean given up over the seats: {float(np.mean(np.array(eq) - ex)):+.6f} "
                         f"({out['exact']['decisions']:,} decision states, {out['exact']['seconds']:.1f} s)")
        if games:
            t0 = time.perf_counter()
            mc = mc_seats(sol, bot, games, seed)
            out["monte_carlo"] = {"games": games, "seed": seed, "seats": mc,
                                  "seconds": round(time.perf_counter() - t0, 3)}
            lines.append(f"Monte Carlo, {games:,} games (seed {seed}):")
            for r in mc:
                lo, hi = r["ci95"]
                lines.append(f"  seat {r['seat']}: bot {r['p_win']:.4f} (95% {lo:.4f} to {hi:.4f}) in "
                             f"{r['games']:,} games, equilibrium {eq[r['seat'] - 1]:.4f}")
        return {"json": out, "text": "\n".join(lines)}
    finally:
        bot.close()
