"""The objective ``rate``: the most points per turn in the long run.

A player who plays turn after turn, with no goal, scores ``r`` per turn: the total of
a bank, or nothing on a zero turn, less the penalty when a zero turn completes the
bolts limit. What a turn can do depends on the banked score only through the
zero-turn counter ``c`` (0 .. limit-1, the ``bolts`` of :class:`PlayerState`), so this is
an average-reward Markov decision problem over ``c``. The gain ``g`` (points per turn)
and the relative values ``h`` (``h(0) = 0``) solve::

    g + h(c) = max_policy  E[ r + h(c') ]

where, for a turn from counter ``c`` under a turn policy, a bank of ``t`` gives
``r = t`` and ``c' = bank(c)`` (0 with consecutive bolts, else ``c``), and a zero turn
gives ``c' = zero(c)`` with ``r = -penalty`` when it completes the limit, else 0 — all
as :class:`thousand.engine.player.Moves` says. The inner max is the turn DP
(:func:`thousand.kernel.turn_dp`) with stop values ``t + h(bank(c))`` and bust value
``r_zero(c) + h(zero(c))``, one column per counter. Policy iteration: evaluate the
turn policies exactly (their end distributions, :func:`thousand.kernel.end_distribution`,
give each counter's expected reward and transitions: a linear system in ``g`` and
``h``), improve them with the turn DP, until the policies repeat. The counter chain is
unichain (a bank always leads back to the start of the counting), so ``g`` is the same
from every counter.

The rate is defined where the turn depends on the score only through the counter: no
pits, no dump, no barrel and no instant wins (the goal is set aside: the long run has
none). An opening requirement and the score floor are transient and do not change the
long-run rate; the rate is that of an opened player.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from thousand import kernel
from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.engine.player import Moves, PlayerState
from thousand.rules.ruleset import Ruleset

__all__ = ["MAX_ROUNDS", "RateSolution", "rate_end_values", "rate_refusal", "solve_rate"]

MAX_ROUNDS = 100


def rate_refusal(rs: Ruleset) -> str | None:
    """Why ``rate`` has no meaning for ``rs`` (one line), or None."""
    why = []
    if rs.pits:
        why.append("pits")
    if rs.dump:
        why.append("a dump score (samosval)")
    if rs.barrel.kind != "none":
        why.append("a barrel")
    if rs.scoring.instant_win:
        why.append("instant wins")
    if not why:
        return None
    return (
        f"{rs.name} has {' and '.join(why)}: the turn then depends on the banked score, not only "
        "on the zero-turn counter, so points per turn in the long run are not defined; the rate needs "
        "them set aside (e.g. --set pits=[] --set dump=[] --set barrel.kind=none)"
    )


@dataclass
class RateSolution:
    """The solved rate: ``gain`` (points per turn), ``relative`` (h per counter, h[0] = 0),
    ``expected_points`` and ``zero_probability`` of each counter's turn under its optimal
    strategy, the turn-DP horizon ``T`` (units), the policy rounds, the change of the gain at
    the last horizon doubling and the seconds."""

    rs: Ruleset
    gain: float
    relative: np.ndarray
    expected_points: np.ndarray
    zero_probability: np.ndarray
    T: int
    rounds: int
    change: float
    seconds: float

    @property
    def counters(self) -> int:
        return len(self.relative)


class _Chain:
    """The counter chain of a ruleset: each counter's player, and where a bank and a zero
    turn lead (counter, points), by :class:`Moves` on a score far from the floor."""

    def __init__(self, rs: Ruleset):
        # the long run has no goal: the same rules with one too far to reach
        self.rs, self.moves = rs, Moves(dataclasses.replace(rs, goal=10**9 * rs.unit))
        L = max(rs.bolts.limit, 1)
        self.base = 10**6 * rs.unit
        self.players = [PlayerState(self.base, True, c) for c in range(L)]
        self.zero_next, self.zero_points, self.bank_next = [], [], []
        for x in self.players:
            z = self.moves.zero(x)
            self.zero_next.append(z.bolts)
            self.zero_points.append(float(z.score - x.score))
            self.bank_next.append(self.moves.bank(x, rs.unit).bolts)  # the same for every total

    def stop_ok(self, T: int) -> np.ndarray:
        x, u = self.players[0], self.rs.unit
        return np.array([self.moves.can_bank(x, int(t) * u) for t in range(T + 1)], np.uint8)


def _solve_at(rs: Ruleset, chain: _Chain, T: int, table) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, int]:
    u = float(rs.unit)
    L = len(chain.players)
    ok = chain.stop_ok(T)
    forced = np.zeros(T + 1, np.uint8)
    pts = np.arange(T + 1) * u
    h = np.zeros(L)
    last = None
    for rounds in range(1, MAX_ROUNDS + 1):
        stop = pts[:, None] + h[chain.bank_next][None, :]
        bust = np.array(chain.zero_points) + h[chain.zero_next]
        tv = kernel.turn_dp(table, ok, stop, forced, np.zeros((T + 1, L)), bust, np.zeros(L), full=True)
        stop_p, _forced, bust_p, _win = kernel.end_distribution(table, ok, stop, forced, np.zeros((T + 1, L)), tv)
        # evaluate the policies exactly: g + h(c) - sum_c' P(c, c') h(c') = R(c), h(0) = 0
        R = (stop_p * pts[:, None]).sum(axis=0) + bust_p * np.array(chain.zero_points)
        A = np.zeros((L, L))
        A[:, 0] = 1.0  # the unknowns: g, h(1), ..., h(L-1)
        for c in range(L):
            P = np.zeros(L)
            P[chain.bank_next[c]] += stop_p[:, c].sum()
            P[chain.zero_next[c]] += bust_p[c]
            row = -P
            row[c] += 1.0
            A[c, 1:] += row[1:]
        sol = np.linalg.solve(A, R)
        g, h_new = float(sol[0]), np.concatenate([[0.0], sol[1:]])
        key = np.round(tv.start, 9).tobytes() + np.round(h_new, 9).tobytes()
        if last is not None and np.abs(h_new - h).max() <= 1e-10 * max(1.0, abs(g)) and key == last:
            return g, h_new, R, bust_p.copy(), rounds
        h, last = h_new, key
    raise StateError(
        _("the rate of {0} did not settle in {1} policy rounds").format(rs.name, MAX_ROUNDS)
    )  # pragma: no cover


def solve_rate(rs: Ruleset, table=None) -> RateSolution:
    """The objective ``rate`` (module docstring); the turn horizon doubles until the gain
    moves by less than 1e-13 of itself."""
    why = rate_refusal(rs)
    if why:
        raise StateError(why)
    t0 = time.perf_counter()
    table = table or kernel.roll_table(rs)
    chain = _Chain(rs)
    T = max(64, 4 * (rs.goal // rs.unit))
    g, h, R, z, rounds = _solve_at(rs, chain, T, table)
    while True:
        T2 = 2 * T
        g2, h2, R2, z2, rounds2 = _solve_at(rs, chain, T2, table)
        change = abs(g2 - g)
        if change <= 1e-13 * max(1.0, abs(g2)) or T2 > 1 << 22:
            return RateSolution(rs, g2, h2, R2, z2, T2, rounds2, change, time.perf_counter() - t0)
        g, T = g2, T2


def rate_end_values(sol: RateSolution, c: int, T: int):
    """The turn-DP end values of a turn from counter ``c`` (for the advisor): stop at t is
    worth ``t + h(bank(c))``, a zero turn ``r_zero(c) + h(zero(c))`` (relative points)."""
    chain = _Chain(sol.rs)
    h = sol.relative
    stop = (np.arange(T + 1) * float(sol.rs.unit) + h[chain.bank_next[c]])[:, None]
    bust = np.array([chain.zero_points[c] + h[chain.zero_next[c]]])
    return stop, bust
