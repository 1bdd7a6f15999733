"""Validate a bot against the optimum: exact evaluation, Monte Carlo, blunders.

* :class:`Oracle`: the value of every legal action of a decision by a solved table
  (the duel table against the opponent's state, or the race table), through the
  advisor's own in-turn code, with the turn DP cached per state pair.
* Exact evaluation: the bot (deterministic) is asked once per reachable decision
  state; the turn of each player state pair is enumerated forward over roll
  outcomes with exact probabilities, giving how the turn ends; the game is then a
  linear system over (bot state, opponent state, whose turn) -- or over the bot's
  states alone in a race -- solved exactly with a sparse LU solve.
* Monte Carlo: games played by the Python game loop (any bot), or by the compiled
  simulator ``thousand.simulate`` when both bots are built in and it is there.
* Blunders: at every decision the bot took, the best action by the table and what
  the bot's action gave up; totals per game and the worst decisions with the
  ``thousand advise`` command line that shows each.
"""

from __future__ import annotations

import heapq
import json
import math
import random
import sys
import time
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from math import factorial

import click
import numpy as np

from . import kernel
from .bots import Action, Bot, BotState, Rules, advise_command, is_builtin, load_bot
from .errors import BotError, ThousandError
from .game import WIN, Moves, PlayerState
from .rules import Ruleset, load_ruleset
from .turn import TurnEnds

EXACT_BUDGET = 1_500_000     # decision states the exact evaluation may ask a bot about
BLUNDER_SWEEP_BUDGET = 50_000  # decision states of the sweep whose blunders are also valued
MAX_TURNS = 5000             # a game that lasts longer is abandoned (bots that never bank)


# --------------------------------------------------------------------------- the oracle


class Oracle:
    """Values of actions by a solved table (objective ``duel`` or ``race``)."""

    def __init__(self, rs: Ruleset, objective: str, tables_dir: str | None = None, progress: bool = True):
        from .solve import solve_objective
        self.rs, self.objective = rs, objective
        self.solution = solve_objective(rs, objective, tables_dir, progress=progress)
        self.moves = Moves(rs)
        self.higher = objective == "duel"
        self._adv: dict = {}
        self._ends: dict = {}
        self._turn: dict = {}
        self._vals: dict = {}
        self._table = kernel.roll_table(rs)

    def advisor(self, y):
        from .advisor import duel_advisor, race_advisor
        key = y if self.objective == "duel" else None
        a = self._adv.get(key)
        if a is None:
            a = self._adv[key] = duel_advisor(self.solution, y) if self.objective == "duel" \
                else race_advisor(self.solution)
        return a

    def turn(self, x: PlayerState, y: PlayerState | None):
        """(advisor, ends, stop_v, forced_v, bust_v, win_v, tv) of the turn of ``x`` against ``y``."""
        key = (x, y if self.objective == "duel" else None)
        r = self._turn.get(key)
        if r is None:
            adv = self.advisor(y)
            ends = self._ends.get(x)
            if ends is None:
                ends = self._ends[x] = TurnEnds.of(self.moves, x)
            stop_v, forced_v, bust_v, win_v = adv.values_of(ends)
            tv = kernel.turn_dp(self._table, ends.stop_ok, stop_v, ends.forced_ok, forced_v, bust_v, win_v,
                                full=True)
            r = self._turn[key] = (adv, ends, stop_v, forced_v, bust_v, win_v, tv)
        return r

    def values(self, state: BotState) -> list[float]:
        """The value of each of ``state.legal`` (objective terms: P(win) or expected turns)."""
        key = state.key()
        v = self._vals.get(key)
        if v is not None:
            return v
        adv, ends, stop_v, forced_v, _, _, tv = self.turn(state.me, state.opponent)
        n = state.dice
        confirming = state.hot and self.rs.hot_dice == "confirm"
        out = []
        by_keep: dict = {}
        for a in state.legal:
            opts = by_keep.get(a.keep)
            if opts is None:
                opts = by_keep[a.keep] = adv._after(tv, ends, stop_v, forced_v, state.me, state.turn_total,
                                                    a.points, a.keep, n, confirming)
            if a.forced or len(opts) == 1:
                out.append(opts[0].value)
            else:
                want = "roll" if a.roll else "stop"
                out.append(next(o.value for o in opts if o.then.split(" ")[0] == want))
        self._vals[key] = out
        return out

    def best_index(self, vals: list[float]) -> int:
        return int(np.argmax(vals)) if self.higher else int(np.argmin(vals))

    def best(self, state: BotState) -> Action:
        return state.legal[self.best_index(self.values(state))]

    def loss(self, state: BotState, action: Action) -> tuple[float, float, Action]:
        """(value given up >= 0, value of the bot's action, the best action)."""
        vals = self.values(state)
        b = self.best_index(vals)
        i = state.legal.index(action)
        lost = vals[b] - vals[i] if self.higher else vals[i] - vals[b]
        return max(lost, 0.0), vals[i], state.legal[b]

    def end_distribution(self, x: PlayerState, y: PlayerState | None):
        """How the optimal turn of ``x`` (against ``y``) ends: {(kind, t): p} with kind
        'stop'/'forced' at total t (units), ('bust', 0), ('win', 0)."""
        _, ends, stop_v, forced_v, _, _, tv = self.turn(x, y)
        sp, fp, bp, wp = kernel.end_distribution(self._table, ends.stop_ok, stop_v, ends.forced_ok, forced_v, tv)
        out = {}
        for t in np.flatnonzero(sp[:, 0] > 0):
            out[("stop", int(t))] = float(sp[t, 0])
        for t in np.flatnonzero(fp[:, 0] > 0):
            out[("forced", int(t))] = float(fp[t, 0])
        if bp[0] > 0:
            out[("bust", 0)] = float(bp[0])
        if wp[0] > 0:
            out[("win", 0)] = float(wp[0])
        return out, ends


# --------------------------------------------------------------------------- the game engine


class Engine:
    """Applies the rules to whole turns and games (the in-turn rules of :class:`Rules`,
    the end of a turn as in :func:`thousand.advisor.duel_advisor`)."""

    def __init__(self, rs: Ruleset):
        self.rs = rs
        self.rules = Rules(rs)
        self.moves = self.rules.moves
        self._legal: dict = {}

    def legal(self, x: PlayerState, t: int, roll: tuple[int, ...]):
        key = (x, t, roll)
        r = self._legal.get(key)
        if r is None:
            r = self._legal[key] = self.rules.legal_actions(x, t, roll)
        return r

    def end_turn(self, x: PlayerState, y: PlayerState | None, kind: str, t: int):
        """The players after a turn of ``x`` ended: (x', y') or WIN. ``kind``: 'stop'
        (bank t points), 'forced' (a mid-turn end at t), 'bust', 'win' (instant)."""
        mv = self.moves
        if kind == "win":
            return WIN
        if kind == "bust":
            return (mv.zero(x), y)
        ev = mv.mid_turn(x, t) if kind == "forced" else None
        if ev == "overshoot":
            return (mv.zero(x, overshoot=True), y)
        x2 = mv.mid_turn_end(x, t, ev) if ev else mv.bank(x, t)
        if x2 == WIN:
            return WIN
        if y is not None:
            y = mv.affect_opponent(y, x.score, mv.raised_to(x, t), mv.climbed(x, x2))
        return (x2, y)

    def play_turn(self, rng: random.Random, bot: Bot, x: PlayerState, y: PlayerState | None,
                  on_decision=None):
        """One turn of ``bot`` from ``x``: ('stop'|'forced'|'bust'|'win', t in points)."""
        rs, faces = self.rs, self.rs.faces
        t, n = 0, rs.dice
        while True:
            roll = tuple(sorted(rng.randint(1, faces) for _ in range(n)))
            if self.rules.instant_win(roll):
                return "win", 0
            legal = self.legal(x, t, roll)
            if not legal:
                return "bust", 0
            hot = self.rules.hot_roll(t, n)
            if len(legal) == 1:
                a = legal[0]
            else:
                st = BotState(rs, x, y, t, roll, legal, hot)
                a = bot.choose(st)
                if on_decision is not None:
                    on_decision(st, a)
            t += a.points
            if a.then.startswith("ends"):
                return "forced", t
            if not a.roll:
                return "stop", t
            n = self.rules.dice_after(n, a)


# --------------------------------------------------------------------------- exact turns


def roll_outcomes(rs: Ruleset, n: int) -> list[tuple[tuple[int, ...], float]]:
    """Every sorted roll of ``n`` dice with its probability."""
    out = []
    denom = rs.faces ** n
    for roll in combinations_with_replacement(range(1, rs.faces + 1), n):
        w = factorial(n)
        for f in set(roll):
            w //= factorial(roll.count(f))
        out.append((roll, w / denom))
    return out


class BudgetExceeded(Exception):
    pass


class PolicyTurns:
    """Turn-end distributions of a fixed policy, enumerated forward over roll outcomes;
    the bot is asked once per decision state (answers cached)."""

    def __init__(self, engine: Engine, bot: Bot | None, oracle: Oracle | None = None,
                 budget: int = EXACT_BUDGET, decisions: list | None = None):
        self.engine, self.bot, self.oracle = engine, bot, oracle
        self.budget = budget
        self.answers: dict = {}
        self.decisions = decisions        # collects (state, action) of every decision state
        self.truncated = 0.0
        rs = engine.rs
        self.rolls = {n: roll_outcomes(rs, n) for n in range(1, rs.dice + 1)}

    def ends(self, x: PlayerState, y: PlayerState | None) -> dict:
        """{(kind, t points): probability} of the turn of ``x`` against ``y``."""
        if self.bot is None:  # the optimal policy: from the turn DP
            dist, _ = self.oracle.end_distribution(x, y)
            u = self.engine.rs.unit
            return {(k, t * u): p for (k, t), p in dist.items()}
        eng, rs = self.engine, self.engine.rs
        rules = eng.rules
        # Beyond the saturation total every bank ends alike, so a bot is not asked there: it
        # banks as soon as allowed (compulsory rolls go on), as every sensible player does.
        sat = eng.moves.saturation(x)
        cap = sat
        out: dict = {}
        mass = {(0, rs.dice): 1.0}
        heap = [(0, rs.dice)]
        while heap:
            t, n = heapq.heappop(heap)
            m = mass.pop((t, n))
            if t > cap:
                for k, p in self.tail(x, n).items():
                    out[k] = out.get(k, 0.0) + m * p
                continue
            hot = rules.hot_roll(t, n)
            for roll, p in self.rolls[n]:
                q = m * p
                if rules.instant_win(roll):
                    out[("win", 0)] = out.get(("win", 0), 0.0) + q
                    continue
                legal = eng.legal(x, t, roll)
                if not legal:
                    out[("bust", 0)] = out.get(("bust", 0), 0.0) + q
                    continue
                if len(legal) == 1:
                    a = legal[0]
                else:
                    key = (x, y, t, roll)
                    a = self.answers.get(key)
                    if a is None:
                        if len(self.answers) >= self.budget:
                            raise BudgetExceeded
                        st = BotState(rs, x, y, t, roll, legal, hot)
                        a = self.answers[key] = self.bot.choose(st)
                        if self.decisions is not None:
                            self.decisions.append((st, a))
                t1 = t + a.points
                if a.then.startswith("ends"):
                    k = ("forced", t1)
                elif not a.roll:
                    k = ("stop", t1)
                else:
                    n1 = rules.dice_after(n, a)
                    if (t1, n1) not in mass:
                        mass[(t1, n1)] = 0.0
                        heapq.heappush(heap, (t1, n1))
                    mass[(t1, n1)] += q
                    continue
                out[k] = out.get(k, 0.0) + q
        return out


    def tail(self, x: PlayerState, n: int) -> dict:
        """How a turn ends from beyond the saturation total with ``n`` dice to roll, where
        the player banks as soon as allowed: a small linear system over the dice counts
        (compulsory rolls of hot dice chain), solved once per player state."""
        cache = self._tails = getattr(self, "_tails", {})
        r = cache.get(x)
        if r is None:
            eng, rs = self.engine, self.engine.rs
            rules = eng.rules
            t = eng.moves.saturation(x) + rs.unit
            D = rs.dice
            M = np.zeros((D, D))
            keys: dict = {}
            B = []
            for n1 in range(1, D + 1):
                row: dict = {}
                for roll, p in self.rolls[n1]:
                    if rules.instant_win(roll):
                        k = ("win", 0)
                    else:
                        legal = eng.legal(x, t, roll)
                        if not legal:
                            k = ("bust", 0)
                        else:
                            a = self.tail_action(legal)
                            if a.roll:
                                M[n1 - 1, rules.dice_after(n1, a) - 1] += p
                                continue
                            k = ("forced" if a.then.startswith("ends") else "stop", t)
                    row[k] = row.get(k, 0.0) + p
                    keys.setdefault(k, len(keys))
                B.append(row)
            Bm = np.zeros((D, len(keys)))
            for i, row in enumerate(B):
                for k, p in row.items():
                    Bm[i, keys[k]] = p
            X = np.linalg.solve(np.eye(D) - M, Bm)
            r = cache[x] = [{k: float(X[i, j]) for k, j in keys.items() if X[i, j] > 0} for i in range(D)]
        return r[n - 1]

    @staticmethod
    def tail_action(legal):
        """Beyond saturation: end the turn where any set-aside allows it (a smaller set-aside
        can bank where the biggest one would force a roll of hot dice), else the set-aside
        with the most points."""
        return next((a for a in legal if not a.roll), legal[0])


@dataclass
class ExactResult:
    objective: str
    value_first: float | None = None     # duel: P(bot wins) moving first; race: expected turns
    value_second: float | None = None
    optimum: float | None = None         # the table's value (optimal vs optimal / optimal race)
    states: int = 0
    decisions: int = 0
    seconds: float = 0.0
    truncated: float = 0.0
    skipped: str = ""
    blunders: list = field(default_factory=list)

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in ("value_first", "value_second", "optimum", "states", "decisions",
                                            "truncated", "skipped")}
        d["seconds"] = round(self.seconds, 3)
        return d


def _solve(rows, cols, vals, rhs, n) -> np.ndarray:
    from scipy import sparse
    from scipy.sparse import linalg as spla
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    A = sparse.identity(n, format="csr") - A
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            v = spla.spsolve(A.tocsc(), rhs)
        except RuntimeError:
            v = np.full(n, np.nan)
    v = np.atleast_1d(v)
    if not np.all(np.isfinite(v)) or np.max(np.abs(A @ v - rhs)) > 1e-8:
        raise ThousandError("the exact evaluation's linear system is singular: some game never ends "
                            "under these bots (a bot that never banks?)")
    return v


def exact_race(engine: Engine, bot: Bot, budget: int = EXACT_BUDGET, decisions: list | None = None) -> ExactResult:
    t0 = time.perf_counter()
    turns = PolicyTurns(engine, bot, budget=budget, decisions=decisions)
    x0 = engine.moves.initial()
    index = {x0: 0}
    todo = [x0]
    rows, cols, vals, rhs = [], [], [], [1.0]
    while todo:
        x = todo.pop()
        i = index[x]
        for (kind, t), p in turns.ends(x, None).items():
            nxt = engine.end_turn(x, None, kind, t)
            if nxt == WIN:
                continue
            x2 = nxt[0]
            j = index.get(x2)
            if j is None:
                j = index[x2] = len(index)
                rhs.append(1.0)
                todo.append(x2)
            rows.append(i)
            cols.append(j)
            vals.append(p)
    v = _solve(rows, cols, vals, np.array(rhs), len(index))
    return ExactResult("race", float(v[0]), None, None, len(index), len(turns.answers),
                       time.perf_counter() - t0, turns.truncated)


def exact_duel(engine: Engine, bot: Bot, opp: Bot | None, oracle: Oracle | None,
               budget: int = EXACT_BUDGET, decisions: list | None = None) -> ExactResult:
    """P(bot wins) moving first and second; ``opp`` None = the optimal opponent (``oracle``)."""
    t0 = time.perf_counter()
    bt = PolicyTurns(engine, bot, budget=budget, decisions=decisions)
    ot = PolicyTurns(engine, opp, oracle=oracle, budget=budget) if opp is not bot else bt
    x0 = engine.moves.initial()
    # state (a, b, w): bot in a, opponent in b, w = 0 the bot moves, 1 the opponent moves
    index: dict = {}
    todo = []

    def idx(s) -> int:
        j = index.get(s)
        if j is None:
            j = index[s] = len(index)
            todo.append(s)
        return j

    first, second = idx((x0, x0, 0)), idx((x0, x0, 1))
    rows, cols, vals = [], [], []
    rhs: dict = {}
    while todo:
        a, b, w = s = todo.pop()
        i = index[s]
        if w == 0:
            dist = bt.ends(a, b)
            mover, other = a, b
        else:
            dist = ot.ends(b, a)
            mover, other = b, a
        for (kind, t), p in dist.items():
            nxt = engine.end_turn(mover, other, kind, t)
            if nxt == WIN:
                if w == 0:
                    rhs[i] = rhs.get(i, 0.0) + p
                continue
            m2, o2 = nxt
            j = idx((m2, o2, 1) if w == 0 else (o2, m2, 0))
            rows.append(i)
            cols.append(j)
            vals.append(p)
        if len(index) > 4 * budget:
            raise BudgetExceeded
    n = len(index)
    r = np.zeros(n)
    for i, p in rhs.items():
        r[i] = p
    v = _solve(rows, cols, vals, r, n)
    return ExactResult("duel", float(v[first]), float(v[second]), None, n,
                       len(bt.answers) + (len(ot.answers) if ot is not bt else 0),
                       time.perf_counter() - t0, bt.truncated + (ot.truncated if ot is not bt else 0.0))


# --------------------------------------------------------------------------- Monte Carlo


def wilson(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


@dataclass
class Blunders:
    """Decisions the bot took, valued by the table: per game totals and the worst ones."""

    oracle: Oracle
    keep: int = 10
    decisions: int = 0
    total: float = 0.0
    mistakes: int = 0
    per_game: list = field(default_factory=list)
    worst: list = field(default_factory=list)   # heap of (loss, seq, state, action, best, value)
    _seq: int = 0
    _game: float = 0.0

    def record(self, state: BotState, action: Action) -> float:
        lost, value, best = self.oracle.loss(state, action)
        self.decisions += 1
        self.total += lost
        self._game += lost
        if lost > 1e-12:
            self.mistakes += 1
        self._seq += 1
        item = (lost, -self._seq, state, action, best, value)
        if self.keep <= 0:
            pass
        elif len(self.worst) < self.keep:
            heapq.heappush(self.worst, item)
        elif lost > self.worst[0][0]:
            heapq.heapreplace(self.worst, item)
        return lost

    def end_game(self) -> None:
        self.per_game.append(self._game)
        self._game = 0.0

    def worst_sorted(self) -> list:
        return sorted(self.worst, key=lambda it: (-it[0], -it[1]))


@dataclass
class MCResult:
    games: int = 0
    first_games: int = 0
    first_wins: float = 0.0
    second_games: int = 0
    second_wins: float = 0.0
    unfinished: int = 0
    turns: list = field(default_factory=list)
    seconds: float = 0.0
    engine: str = "python"

    @property
    def wins(self) -> float:
        return self.first_wins + self.second_wins

    def to_json(self, race: bool) -> dict:
        if race:
            m, lo, hi = mean_ci(self.turns)
            return {"games": self.games, "mean_turns": m, "ci95": [lo, hi], "unfinished": self.unfinished,
                    "seconds": round(self.seconds, 3), "engine": self.engine}
        out = {"games": self.games, "win_rate": self.wins / max(self.games, 1),
               "ci95": list(wilson(self.wins, self.games)), "unfinished": self.unfinished,
               "seconds": round(self.seconds, 3), "engine": self.engine}
        for seat, k, n in (("first", self.first_wins, self.first_games), ("second", self.second_wins,
                                                                          self.second_games)):
            if n:
                out[f"as_{seat}"] = {"games": n, "win_rate": k / n, "ci95": list(wilson(k, n))}
        return out


def mean_ci(xs) -> tuple[float, float, float]:
    n = len(xs)
    if n == 0:
        return (float("nan"),) * 3
    a = np.asarray(xs, dtype=float)
    m = float(a.mean())
    s = float(a.std(ddof=1)) if n > 1 else 0.0
    h = 1.959963984540054 * s / math.sqrt(n)
    return m, m - h, m + h


def _games(res: MCResult, games: int, blunders: Blunders | None, blunder_games: int | None, progress: bool):
    """Yield ``(game number, blunder recorder or None)`` for each game, keeping the books
    around it: blunders valued in the first ``blunder_games`` games only, the game count,
    progress on stderr and the time."""
    t0 = last = time.perf_counter()
    rec = blunders.record if blunders is not None else None
    for g in range(games):
        if blunder_games is not None and g == blunder_games:
            rec, blunders = None, None
        yield g, rec
        if blunders is not None:
            blunders.end_game()
        res.games += 1
        if progress and time.perf_counter() - last > 1.0:
            last = time.perf_counter()
            sys.stderr.write(f"\rMonte Carlo: {g + 1}/{games} games   ")
            sys.stderr.flush()
    if progress and time.perf_counter() - t0 > 1.0:
        sys.stderr.write("\n")
    res.seconds = time.perf_counter() - t0


def mc_duel(engine: Engine, bot: Bot, opp: Bot, games: int, seed: int, blunders: Blunders | None = None,
            progress: bool = False, blunder_games: int | None = None) -> MCResult:
    """``games`` games, the bot first in even-numbered ones and second in odd ones."""
    rng = random.Random(seed)
    res = MCResult()
    x0 = engine.moves.initial()
    for g, rec in _games(res, games, blunders, blunder_games, progress):
        bot_first = g % 2 == 0
        bot.new_game()
        if opp is not bot:
            opp.new_game()
        players = [bot, opp] if bot_first else [opp, bot]
        states = [x0, x0]
        mover = 0
        winner = None
        for _ in range(MAX_TURNS):
            p = players[mover]
            kind, t = engine.play_turn(rng, p, states[mover], states[1 - mover],
                                       rec if p is bot else None)
            nxt = engine.end_turn(states[mover], states[1 - mover], kind, t)
            if nxt == WIN:
                winner = mover
                break
            states[mover], states[1 - mover] = nxt
            mover = 1 - mover
        bot_seat = 0 if bot_first else 1
        won = 1.0 if winner == bot_seat else (0.5 if winner is None else 0.0)
        if winner is None:
            res.unfinished += 1
        if bot_first:
            res.first_games += 1
            res.first_wins += won
        else:
            res.second_games += 1
            res.second_wins += won
    return res


def mc_race(engine: Engine, bot: Bot, games: int, seed: int, blunders: Blunders | None = None,
            progress: bool = False, blunder_games: int | None = None) -> MCResult:
    """``games`` games of the bot alone: the turns it needs to win."""
    rng = random.Random(seed)
    res = MCResult()
    x0 = engine.moves.initial()
    for _g, rec in _games(res, games, blunders, blunder_games, progress):
        bot.new_game()
        x = x0
        for k in range(1, MAX_TURNS + 1):
            kind, t = engine.play_turn(rng, bot, x, None, rec)
            nxt = engine.end_turn(x, None, kind, t)
            if nxt == WIN:
                res.turns.append(k)
                break
            x = nxt[0]
        else:
            res.unfinished += 1
    return res


def fast_mc(rs: Ruleset, objective: str, bot: str, opp: str, games: int, seed: int,
            tables_dir: str | None) -> MCResult | None:
    """Monte Carlo by the compiled simulator (``thousand.simulate``), when it is there and
    takes these bots and rules; else None."""
    if not (is_builtin(bot) and (objective == "race" or is_builtin(opp))):
        return None
    try:
        from . import simulate  # type: ignore[attr-defined]
    except ImportError:
        return None
    try:
        if objective == "race":
            r = simulate.simulate_race(rs, bot, games, seed, tables_dir=tables_dir)
            res = MCResult(games=r.games, seconds=r.seconds, engine="compiled")
            res.turns = _Moments(r.games, r.mean_turns, r.std_turns)
            return res
        half = games // 2
        a = simulate.simulate_duel(rs, bot, opp, games - half, seed, tables_dir=tables_dir)
        b = simulate.simulate_duel(rs, opp, bot, half, seed + 1, tables_dir=tables_dir)
        # unfinished games (cut by the simulator's turn limit) count one half, as in the Python loop
        return MCResult(games=a.games + b.games, first_games=a.games,
                        first_wins=a.first_wins + 0.5 * a.unfinished,
                        second_games=b.games, second_wins=b.second_wins + 0.5 * b.unfinished,
                        unfinished=a.unfinished + b.unfinished,
                        seconds=a.seconds + b.seconds, engine="compiled")
    except ThousandError:
        return None
    except Exception:  # an unfinished simulator must never break the evaluation
        return None


class _Moments(list):
    """Mean and standard deviation of many samples, standing in for the list of samples."""

    def __init__(self, n: int, mean: float, std: float):
        super().__init__()
        self.n, self.mean, self.std = n, mean, std


def _mean_ci_any(turns) -> tuple[float, float, float]:
    if isinstance(turns, _Moments):
        h = 1.959963984540054 * turns.std / math.sqrt(max(turns.n, 1))
        return turns.mean, turns.mean - h, turns.mean + h
    return mean_ci(turns)


# --------------------------------------------------------------------------- the command


def _fmt(v: float | None, race: bool) -> str:
    if v is None:
        return "-"
    return f"{v:.4f}" if race else f"{v:.6f}"


@click.command()
@click.argument("rules", metavar="RULES")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a ruleset key (dotted keys, TOML values); repeatable.")
@click.option("--bot", "bot_spec", required=True, metavar="SPEC",
              help="optimal, race, hold:N, cautious, random, exec:COMMAND (JSON lines), "
                   "module:attr or path/to/file.py:attr.")
@click.option("--opponent", "opp_spec", default="optimal", show_default=True, metavar="SPEC",
              help="The opponent in a duel (a bot spec).")
@click.option("--objective", type=click.Choice(("duel", "race")), default="duel", show_default=True,
              help="duel: win probability against the opponent; race: expected turns alone.")
@click.option("--games", type=int, default=2000, show_default=True,
              help="Monte Carlo games (a duel plays half of them in each seat order); 0: none.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the dice (and of random bots).")
@click.option("--exact/--no-exact", default=True, show_default=True,
              help="Evaluate exactly where the decision states fit the budget.")
@click.option("--budget", type=int, default=EXACT_BUDGET, show_default=True,
              help="Most decision states the exact evaluation asks the bot about.")
@click.option("--blunder-games", type=int, default=500, show_default=True,
              help="Monte Carlo games in which every decision of the bot is valued by the table.")
@click.option("--worst", type=int, default=5, show_default=True, help="Worst decisions to list.")
@click.option("--timeout", type=float, default=2.0, show_default=True,
              help="Seconds an exec: bot has for each decision.")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), envvar="THOUSAND_TABLES",
              help="Tables directory.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def evaluate(rules: str, overrides: tuple[str, ...], bot_spec: str, opp_spec: str, objective: str, games: int,
             seed: int, exact: bool, budget: int, blunder_games: int, worst: int, timeout: float,
             tables_dir: str | None, as_json: bool) -> None:
    """How far a bot is from optimal play, and where it goes wrong."""
    rs = load_ruleset(rules, overrides)
    for name, v in (("--games", games), ("--budget", budget), ("--blunder-games", blunder_games),
                    ("--worst", worst)):
        if v < 0:
            raise BotError(f"{name} must be 0 or more")
    if not timeout > 0:
        raise BotError("--timeout must be positive")
    if objective == "duel" and rs.equal_turns:
        # the bots, the exact evaluation and the simulator know no seats and no last turn
        raise BotError(f"{rs.name} plays equal turns: evaluate does not play equal_turns duels; "
                       "use --objective race")
    report = run_evaluation(rs, bot_spec, opp_spec, objective, games, seed, exact, budget, worst, timeout,
                            tables_dir, overrides, blunder_games=blunder_games)
    if as_json:
        click.echo(json.dumps(report["json"]))
    else:
        click.echo(report["text"])


def run_evaluation(rs: Ruleset, bot_spec: str, opp_spec: str = "optimal", objective: str = "duel",
                   games: int = 2000, seed: int = 1, exact: bool = True, budget: int = EXACT_BUDGET,
                   worst: int = 5, timeout: float = 2.0, tables_dir: str | None = None,
                   overrides: tuple[str, ...] = (), progress: bool = True, blunder_games: int = 500) -> dict:
    """The whole evaluation: {'json': ..., 'text': ..., 'exact': ExactResult|None, 'mc': MCResult|None,
    'blunders': Blunders}."""
    race = objective == "race"
    oracles: dict = {}
    oracle = Oracle(rs, objective, tables_dir, progress=progress)
    oracles[objective] = oracle
    engine = Engine(rs)
    bots: list[Bot] = []
    try:
        bot = load_bot(bot_spec, rs, objective, tables_dir, seed, timeout, oracles)
        bots.append(bot)
        opp = None
        if not race:
            opp = bot if opp_spec.strip() == bot_spec.strip() and bot.deterministic else \
                load_bot(opp_spec, rs, objective, tables_dir, seed + 7919, timeout, oracles)
            if opp is not bot:
                bots.append(opp)
        out: dict = {"ruleset": rs.name, "ruleset_hash": rs.hash, "objective": objective, "bot": bot.name,
                     "opponent": None if race else opp.name}
        lines = [f"{rs.name}: bot {bot.name}" + ("" if race else f" against {opp.name}")
                 + f" ({'expected turns to win alone' if race else 'P(bot wins)'})"]
        optimum = oracle.solution.start_value()

        # ---- exact
        ex = None
        sweep_blunders = Blunders(oracle, keep=worst)
        if exact:
            ex, why = _exact(engine, rs, bot, opp, opp_spec, oracle, race, budget, sweep_blunders, progress)
            if ex is None:
                lines.append(f"exact: skipped ({why}); Monte Carlo only")
                out["exact"] = {"skipped": why}
            else:
                ex.optimum = optimum
                out["exact"] = ex.to_json()
                if race:
                    lines.append(f"exact: expected turns {ex.value_first:.6f}, optimum {optimum:.6f}, "
                                 f"given up {ex.value_first - optimum:+.6f} turns "
                                 f"({ex.states} states, {ex.decisions} decision states, {ex.seconds:.1f} s)")
                else:
                    lines.append(f"exact: P(bot wins) moving first {ex.value_first:.6f}, second "
                                 f"{ex.value_second:.6f}; optimal vs optimal: first {optimum:.6f}, "
                                 f"second {1 - optimum:.6f}")
                    lines.append(f"       ({ex.states} game states, {ex.decisions} decision states, "
                                 f"{ex.seconds:.1f} s)")
                if ex.truncated > 1e-12:
                    lines.append(f"       note: {ex.truncated:.2e} of probability cut off in very long turns "
                                 "(counted as busts)")
                if sweep_blunders.decisions:
                    out["exact"]["blunders"] = _blunder_json(sweep_blunders, rs, objective, overrides, race,
                                                             per_game=False)
        else:
            out["exact"] = {"skipped": "--no-exact"}

        # ---- Monte Carlo
        mc = None
        blunders = Blunders(oracle, keep=worst)
        if games:
            mc = fast_mc(rs, objective, bot_spec, opp_spec, games, seed, tables_dir)
            if mc is not None:
                # blunders from a smaller run of the Python game loop
                g2 = min(games, blunder_games)
                if race:
                    mc_race(engine, bot, g2, seed, blunders)
                else:
                    mc_duel(engine, bot, opp, g2, seed, blunders)
            elif race:
                mc = mc_race(engine, bot, games, seed, blunders, progress, blunder_games)
            else:
                mc = mc_duel(engine, bot, opp, games, seed, blunders, progress, blunder_games)
            out["monte_carlo"] = mc.to_json(race) if not isinstance(mc.turns, _Moments) else \
                {"games": mc.games, "mean_turns": mc.turns.mean,
                 "ci95": list(_mean_ci_any(mc.turns)[1:]), "seconds": round(mc.seconds, 3), "engine": mc.engine}
            speed = mc.games / mc.seconds if mc.seconds > 0 else float("inf")
            if race:
                m, lo, hi = _mean_ci_any(mc.turns)
                lines.append(f"Monte Carlo: {mc.games} games, mean turns {m:.4f} (95% CI {lo:.4f} to {hi:.4f})"
                             f"{_unf(mc)}; {mc.seconds:.1f} s, {speed:,.0f} games/s ({mc.engine})")
            else:
                lo, hi = wilson(mc.wins, mc.games)
                lines.append(f"Monte Carlo: {mc.games} games, bot wins {mc.wins / mc.games:.4f} "
                             f"(95% CI {lo:.4f} to {hi:.4f}){_unf(mc)}; {mc.seconds:.1f} s, "
                             f"{speed:,.0f} games/s ({mc.engine})")
                for seat, k, n in (("first", mc.first_wins, mc.first_games),
                                   ("second", mc.second_wins, mc.second_games)):
                    if n:
                        lo, hi = wilson(k, n)
                        lines.append(f"  moving {seat:6}: {n} games, bot wins {k / n:.4f} "
                                     f"(95% CI {lo:.4f} to {hi:.4f})")
        # ---- blunders
        src = blunders if blunders.decisions else sweep_blunders
        if src.decisions:
            where = f"in the first {len(src.per_game)} simulated games" if src is blunders else "over the exact sweep's decision states"
            unit = "turns" if race else "P(win)"
            lines.append(f"blunders {where}: {src.decisions} decisions, {src.mistakes} not optimal, "
                         f"{src.total:.6f} {unit} given up in all")
            if src is blunders and src.per_game:
                pg = np.asarray(src.per_game)
                lines.append(f"  per game: mean {pg.mean():.6f}, max {pg.max():.6f} {unit} given up")
            ws = [w for w in src.worst_sorted() if w[0] > 1e-12]
            if ws:
                lines.append("  worst decisions:")
            for lost, _, st, a, best, val in ws:
                lines.append(f"  - gave up {lost:.6f}: {_state_text(rs, st)}")
                lines.append(f"      bot: {a.label()}; best: {best.label()}")
                lines.append(f"      $ {advise_command(rs, st, objective, overrides)}")
            out["blunders"] = _blunder_json(src, rs, objective, overrides, race, per_game=src is blunders)
        faults = {b.name: {"counts": b.faults.counts, "examples": b.faults.examples}
                  for b in bots if b.faults.total}
        if faults:
            out["faults"] = faults
            for name, f in faults.items():
                lines.append(f"faults of {name}: " + ", ".join(f"{k} {v}" for k, v in f["counts"].items())
                             + f" (first: {f['examples'][0]})")
        return {"json": out, "text": "\n".join(lines), "exact": ex, "mc": mc, "blunders": src,
                "sweep_blunders": sweep_blunders}
    finally:
        for b in bots:
            b.close()


def _unf(mc: MCResult) -> str:
    return f", {mc.unfinished} unfinished (counted as half)" if mc.unfinished else ""


def _state_text(rs: Ruleset, st: BotState) -> str:
    s = f"me {st.me.describe(rs)}"
    if st.opponent is not None:
        s += f"; opponent {st.opponent.describe(rs)}"
    return s + f"; turn total {st.turn_total}, roll {','.join(map(str, st.roll))}"


def _blunder_json(b: Blunders, rs, objective, overrides, race, per_game: bool) -> dict:
    d = {"decisions": b.decisions, "not_optimal": b.mistakes, "given_up": b.total,
         "worst": [{"given_up": lost, "state": st.to_json(), "bot": a.to_json(), "best": best.to_json(),
                    "advise": advise_command(rs, st, objective, overrides)}
                   for lost, _, st, a, best, _v in b.worst_sorted() if lost > 1e-12]}
    if per_game and b.per_game:
        d["per_game_mean"] = float(np.mean(b.per_game))
        d["per_game_max"] = float(np.max(b.per_game))
    return d


def _exact(engine, rs, bot, opp, opp_spec, oracle, race, budget, sweep_blunders, progress):
    """(ExactResult, "") or (None, why skipped)."""
    if not bot.deterministic:
        return None, f"bot {bot.name} is not deterministic"
    if not race and opp is not None and not opp.deterministic:
        return None, f"opponent {opp.name} is not deterministic"
    n_states = len(oracle.solution.index)
    pairs = n_states if race else n_states * n_states
    if pairs > budget:
        return None, f"{pairs:,} {'states' if race else 'state pairs'} exceed the budget of {budget:,} " \
                     "decision states"
    if progress:
        sys.stderr.write(f"exact evaluation over up to {pairs:,} {'states' if race else 'state pairs'}...\n")
        sys.stderr.flush()
    decisions: list = []
    try:
        if race:
            ex = exact_race(engine, bot, budget, decisions)
        else:
            optimal_opp = opp_spec.strip() == "optimal" and opp is not bot
            ex = exact_duel(engine, bot, None if optimal_opp else opp, oracle, budget, decisions)
    except BudgetExceeded:
        return None, f"more than {budget:,} decision states"
    if len(decisions) <= BLUNDER_SWEEP_BUDGET and not race:
        for st, a in decisions:
            sweep_blunders.record(st, a)
    return ex, ""
