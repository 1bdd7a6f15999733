"""Exact evaluation of bots: every turn enumerated, every game solved as a linear system.

The turn of a player state (against an opponent state) under a fixed policy is
enumerated forward through :class:`thousand.engine.TurnRules` over the roll
outcomes with their exact probabilities (:class:`PolicyTurns`); the bot, which
must be deterministic, is asked once per decision state. With ``E(s)`` those end
distributions, the game is the absorbing Markov chain

    race:  N(x)       = 1 + sum_e p_x(e) N(x_e)                   (expected turns)
    duel:  W(a, b, 0) = sum_e p_a(e) [win_e + W(a_e, b_e, 1)]      (the bot moves)
           W(a, b, 1) = sum_e p_b(e) W(a_e, b_e, 0)                (the opponent moves)

over the states reached from the start, solved with a sparse LU solve.
"""

from __future__ import annotations

import heapq
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from thousand.base.choices import EXACT_BUDGET
from thousand.base.errors import ThousandError
from thousand.base.i18n import _
from thousand.engine.player import PlayerState
from thousand.engine.turn import TurnEnd, TurnRules, TurnState, finish_turn
from thousand.solvers.lastturn import first_seat_T

from .bots import Bot, BotState

__all__ = ["ENDS_KEPT", "BudgetExceeded", "ExactResult", "PolicyTurns", "exact_duel", "exact_race"]


class BudgetExceeded(Exception):
    pass


# turn-end distributions a PolicyTurns keeps (each a small dict: about a kilobyte)
ENDS_KEPT = 200_000


class PolicyTurns:
    """Turn-end distributions of a fixed policy, enumerated forward over roll outcomes;
    the bot is asked once per decision state (answers cached). ``bot`` None is the
    optimal policy of ``oracle``, whose distribution comes from the kernel."""

    def __init__(
        self,
        engine: TurnRules,
        bot: Bot | None,
        oracle=None,
        budget: int = EXACT_BUDGET,
        decisions: list | None = None,
        horizon: int | None = None,
        players: int = 2,
    ):
        self.engine, self.bot, self.oracle = engine, bot, oracle
        self.players = players  # equal_turns: a seat before the last one's turns run long
        self.budget = budget
        self.answers: dict = {}
        self.decisions = decisions  # collects (state, action) of every decision state
        self.truncated = 0.0
        self.horizon = horizon  # equal_turns: the final totals told apart (the duel table's)
        self._tails: dict = {}
        self._ends: dict = {}

    def cap(self, x: PlayerState, seat: int | None, to_beat: int | None) -> int:
        """The turn total (points) beyond which every bank of ``x`` ends alike: the
        saturation total; with ``equal_turns`` the turn of a seat before the last runs on
        to the final totals' horizon (a higher total is a higher F), and a last turn to
        the total that beats ``to_beat``."""
        moves = self.engine.moves
        if to_beat is not None:
            return max(moves.saturation(x), to_beat - x.score)
        if seat is not None and seat < self.players - 1 and self.horizon is not None:
            return first_seat_T(self.engine.rs, moves, x, self.horizon) * self.engine.rs.unit
        return moves.saturation(x)

    def ends(
        self,
        x: PlayerState,
        y: PlayerState | None,
        others: tuple[PlayerState, ...] = (),
        seat: int | None = None,
        to_beat: int | None = None,
        tied: int = 0,
    ) -> dict:
        """{(kind, t points): probability} of the turn of ``x`` against ``y`` (and, with three
        players or more, the ``others`` after it; with ``equal_turns`` in ``seat``, and in a
        last turn against the top total ``to_beat`` held by ``tied`` players)."""
        if self.bot is None:
            return self.oracle.end_distribution(x, y, seat, to_beat)
        # the bot's answers are fixed once asked (self.answers), so a turn's distribution is
        # a function of these arguments, and the seat-by-seat evaluations ask for it again
        # (a three-player game: 6 times fewer enumerations); kept up to ENDS_KEPT turns
        key = (x, y, others, seat, to_beat, tied)
        done = self._ends.get(key)
        if done is None:
            done = self._enumerate(x, y, others, seat, to_beat, tied)
            if len(self._ends) < ENDS_KEPT:
                self._ends[key] = done
        return done

    def _enumerate(self, x, y, others, seat, to_beat, tied) -> dict:
        """:meth:`ends`, enumerated forward over the roll outcomes (totals in a heap)."""
        engine, rs = self.engine, self.engine.rs
        # Beyond the cap every bank ends alike, so a bot is not asked there: it banks as soon
        # as allowed (compulsory rolls go on), as every sensible player does.
        cap = self.cap(x, seat, to_beat)
        out: dict = {}

        def add(k, q):
            out[k] = out.get(k, 0.0) + q

        mass = {(0, rs.dice): 1.0}
        heap = [(0, rs.dice)]
        while heap:
            t, n = heapq.heappop(heap)
            m = mass.pop((t, n))
            if t > cap:
                for k, p in self.tail(x, n, cap).items():
                    add(k, m * p)
                continue
            s = TurnState(x, t, n)
            for roll, p in engine.outcomes(s):
                q = m * p
                r = engine.after_roll(s, roll)
                if isinstance(r, TurnEnd):
                    add((r.kind, 0), q)
                    continue
                legal = engine.legal(r)
                if len(legal) == 1:
                    a = legal[0]
                else:
                    key = (x, y, t, r.roll, others, seat, to_beat, tied)
                    a = self.answers.get(key)
                    if a is None:
                        if len(self.answers) >= self.budget:
                            raise BudgetExceeded
                        st = BotState.at(engine, r, y, others, seat, to_beat, tied)
                        a = self.answers[key] = self.bot.choose(st)
                        if self.decisions is not None:
                            self.decisions.append((st, a))
                nxt = engine.apply(r, a)
                if isinstance(nxt, TurnEnd):
                    add((nxt.kind, nxt.total), q)
                    continue
                k = (nxt.total, nxt.dice)
                if k not in mass:
                    mass[k] = 0.0
                    heapq.heappush(heap, k)
                mass[k] += q
        return out

    def tail(self, x: PlayerState, n: int, cap: int) -> dict:
        """How a turn ends from beyond the total ``cap`` with ``n`` dice to roll, where the
        player banks as soon as allowed: a small linear system over the dice counts
        (compulsory rolls of hot dice chain), solved once per player state and cap; its
        banks are counted at ``cap`` plus one unit."""
        r = self._tails.get((x, cap))
        if r is None:
            engine, rs = self.engine, self.engine.rs
            t = cap + rs.unit
            D = rs.dice
            M = np.zeros((D, D))
            keys: dict = {}
            B = []
            for n1 in range(1, D + 1):
                row: dict = {}
                s = TurnState(x, t, n1)
                for roll, p in engine.outcomes(s):
                    e = engine.after_roll(s, roll)
                    if isinstance(e, TurnEnd):
                        k = (e.kind, 0)
                    else:
                        nxt = engine.apply(e, self.tail_action(engine.legal(e)))
                        if not isinstance(nxt, TurnEnd):
                            M[n1 - 1, nxt.dice - 1] += p
                            continue
                        k = (nxt.kind, t)
                    row[k] = row.get(k, 0.0) + p
                    keys.setdefault(k, len(keys))
                B.append(row)
            Bm = np.zeros((D, len(keys)))
            for i, row in enumerate(B):
                for k, p in row.items():
                    Bm[i, keys[k]] = p
            X = np.linalg.solve(np.eye(D) - M, Bm)
            r = self._tails[(x, cap)] = [{k: float(X[i, j]) for k, j in keys.items() if X[i, j] > 0} for i in range(D)]
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
    value_first: float | None = None  # duel: P(bot wins) moving first; race: expected turns
    value_second: float | None = None
    optimum: float | None = None  # the table's value (optimal vs optimal / optimal race)
    states: int = 0
    decisions: int = 0
    seconds: float = 0.0
    truncated: float = 0.0
    skipped: str = ""
    blunders: list = field(default_factory=list)
    values: dict | None = None  # exact_duel(keep_values=True): P(bot wins) in every state reached

    def to_json(self) -> dict:
        d = {
            k: getattr(self, k)
            for k in ("value_first", "value_second", "optimum", "states", "decisions", "truncated", "skipped")
        }
        d["seconds"] = round(self.seconds, 3)
        return d


def _solve(rows, cols, vals, rhs, n) -> np.ndarray:
    from scipy import sparse
    from scipy.sparse import linalg as spla

    A = sparse.identity(n, format="csr") - sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            v = spla.spsolve(A.tocsc(), rhs)
        except RuntimeError:
            v = np.full(n, np.nan)
    v = np.atleast_1d(v)
    if not np.all(np.isfinite(v)) or np.max(np.abs(A @ v - rhs)) > 1e-8:
        raise ThousandError(
            _(
                "the exact evaluation's linear system is singular: some game never ends "
                "under these bots (a bot that never banks?)"
            )
        )
    return v


def exact_race(engine: TurnRules, bot: Bot, budget: int = EXACT_BUDGET, decisions: list | None = None) -> ExactResult:
    """The bot's expected number of turns to win alone."""
    t0 = time.perf_counter()
    pt = PolicyTurns(engine, bot, budget=budget, decisions=decisions)
    moves = engine.moves
    x0 = moves.initial()
    index = {x0: 0}
    todo = [x0]
    rows, cols, vals, rhs = [], [], [], [1.0]
    while todo:
        x = todo.pop()
        i = index[x]
        for (kind, t), p in pt.ends(x, None).items():
            res = finish_turn(moves, (x,), 0, _turn_end(engine, x, kind, t))
            if res.won:
                continue
            x2 = res.players[0]
            j = index.get(x2)
            if j is None:
                j = index[x2] = len(index)
                rhs.append(1.0)
                todo.append(x2)
            rows.append(i)
            cols.append(j)
            vals.append(p)
    v = _solve(rows, cols, vals, np.array(rhs), len(index))
    return ExactResult(
        "race", float(v[0]), None, None, len(index), len(pt.answers), time.perf_counter() - t0, pt.truncated
    )


def _turn_end(engine: TurnRules, x: PlayerState, kind: str, t: int) -> TurnEnd:
    """The :class:`TurnEnd` of an end-distribution key (a forced end names its event)."""
    return TurnEnd(kind, t, engine.moves.mid_turn(x, t) if kind == "forced" else None)


def exact_duel(
    engine: TurnRules,
    bot: Bot,
    opp: Bot | None,
    oracle=None,
    budget: int = EXACT_BUDGET,
    decisions: list | None = None,
    bot_turns: PolicyTurns | None = None,
    keep_values: bool = False,
    everywhere=(),
) -> ExactResult:
    """P(bot wins) moving first and second; ``opp`` None = the optimal opponent (``oracle``).

    With ``equal_turns`` the bot's seat enters the state, (a, b, w, s) with s the bot's
    seat, and a first-seat win with final total F is valued by the second seat's last
    turn, enumerated the same way with ``to_beat`` = F: the bot's value is

        1 - L_o(b, F)   (the bot finished),      L_b(a, F)   (the opponent finished),

    ``L(y, F)`` = P(a bank with the win condition met above F) + P(equal to F) / 2 +
    P(an instant win) under the last turn's policy (the opponent's optimal one: the chance
    the duel table is built on, :func:`thousand.solvers.lastturn.last_turn_values`).

    ``bot_turns``: the bot's turns enumerated already (their answers asked once across
    calls); ``keep_values``: the result's ``values`` maps every state (a, b, w, s) reached
    to P(bot wins) there; ``everywhere``: player states whose every pair is evaluated too,
    reached from the start or not (without equal turns)."""
    t0 = time.perf_counter()
    rs, moves = engine.rs, engine.moves
    seated = bool(rs.equal_turns)
    horizon = oracle.solution.last_turn_horizon if seated else None
    bt = bot_turns or PolicyTurns(engine, bot, budget=budget, decisions=decisions, horizon=horizon)
    ot = PolicyTurns(engine, opp, oracle=oracle, budget=budget, horizon=horizon) if opp is not bot else bt
    x0 = moves.initial()
    # state (a, b, w, s): bot in a, opponent in b, w = 0 the bot moves, 1 the opponent moves,
    # s the bot's seat (equal_turns; else 0)
    index: dict = {}
    todo = []

    def idx(st) -> int:
        j = index.get(st)
        if j is None:
            j = index[st] = len(index)
            todo.append(st)
        return j

    last: dict = {}

    def beaten(pt: PolicyTurns, y: PlayerState, finished: PlayerState, F: int) -> float:
        """L(y, F): the chance that ``y``'s last turn (second seat) beats ``F`` (a tie 1/2)."""
        key = (pt is bt, y, F)
        v = last.get(key)
        if v is None:
            v = 0.0
            for (kind, t), p in pt.ends(y, finished, seat=1, to_beat=F, tied=1).items():
                res = finish_turn(moves, (y,), 0, _turn_end(engine, y, kind, t))
                if res.won:
                    f = res.final_total
                    v += p * (1.0 if res.instant or f > F else 0.5 if f == F else 0.0)
            last[key] = v
        return v

    first, second = idx((x0, x0, 0, 0)), idx((x0, x0, 1, 1 if seated else 0))
    for a in everywhere:
        for b in everywhere:
            idx((a, b, 0, 0))
            idx((a, b, 1, 0))
    rows, cols, vals = [], [], []
    rhs: dict = {}
    while todo:
        a, b, w, s = st = todo.pop()
        i = index[st]
        mover, other = (a, b) if w == 0 else (b, a)
        seat = (s if w == 0 else 1 - s) if seated else None
        dist = (bt if w == 0 else ot).ends(mover, other, seat=seat)
        for (kind, t), p in dist.items():
            res = finish_turn(moves, (mover, other), 0, _turn_end(engine, mover, kind, t))
            if res.won:
                if seat == 0 and not res.instant:
                    # the round is completed: the second seat's last turn against F
                    F = res.final_total
                    done = mover._replace(score=F)
                    won = 1.0 - beaten(ot, b, done, F) if w == 0 else beaten(bt, a, done, F)
                else:
                    won = 1.0 if w == 0 else 0.0
                if won:
                    rhs[i] = rhs.get(i, 0.0) + p * won
                continue
            m2, o2 = res.players
            j = idx((m2, o2, 1, s) if w == 0 else (o2, m2, 0, s))
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
    out = ExactResult(
        "duel",
        float(v[first]),
        float(v[second]),
        None,
        n,
        len(bt.answers) + (len(ot.answers) if ot is not bt else 0),
        time.perf_counter() - t0,
        bt.truncated + (ot.truncated if ot is not bt else 0.0),
    )
    if keep_values:
        out.values = {st: float(v[j]) for st, j in index.items()}
    return out
