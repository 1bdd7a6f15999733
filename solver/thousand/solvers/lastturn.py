"""The last turn of an equal_turns game (docs/rules.md section 7): the second seat's
chance of beating the first seat's final total, and how far final totals must be told
apart.

``L(y, F)`` is the probability that a second-seat player in state ``y``, in the last
turn of the round after the first seat finished with ``F`` points, banks with its win
condition met and a total above ``F`` (a tie, equal to ``F``, counted 1/2) under the
play that maximises it: one turn DP (:func:`thousand.kernel.turn_dp`) whose end values
are

    stop[t] = 1, 1/2, 0  as  s + t >, =, < F  where the bank meets the win condition,
    stop[t] = 0          for any other bank, forced ends 0, a bust 0, an instant win 1,

with one column per target ``F``. The duel (:mod:`thousand.solvers.duel`) feeds these to the
first seat's winning banks; the advisor uses them for the last turn's advice.
"""

from __future__ import annotations

import threading

import numpy as np

from thousand import kernel
from thousand.base.errors import ThousandError
from thousand.base.i18n import _
from thousand.engine.ends import TurnEnds
from thousand.engine.player import WIN, Moves, PlayerState
from thousand.rules.ruleset import Ruleset

__all__ = [
    "LAST_TURN_TOL",
    "LastRound",
    "first_seat_T",
    "last_turn_end_values",
    "last_turn_ends",
    "last_turn_horizon",
    "last_turn_table",
    "last_turn_values",
]

LAST_TURN_TOL = 1e-16  # the horizon's bound on the error of every value (see last_turn_horizon)


def first_seat_T(rs: Ruleset, moves: Moves, x: PlayerState, horizon: int) -> int:
    """The turn horizon (units) of a first-seat mover: up to the final total ``horizon``
    where a bank can win with a total above the goal (the total raises F), else the
    usual saturation (an exact barrel's win is always exactly the goal)."""
    sat = moves.saturation(x)
    if rs.barrel.kind != "exact" and moves.wins(x, rs.goal - x.score):
        sat = max(sat, horizon - x.score)
    return sat // rs.unit


def last_turn_end_values(rs: Ruleset, ends: TurnEnds, targets):
    """The end values of the second seat's last turn from ``ends.x`` against each
    final total ``F`` in ``targets`` (points), as :func:`thousand.kernel.turn_dp`
    takes them: ``(stop, forced, bust, win)`` with stop values 1, 1/2, 0 as
    ``s + t`` is >, =, < F where the bank meets the win condition (0 for any other
    bank), forced ends 0 (a mid-turn dump or an overshoot loses), a bust 0 and an
    instant win 1. Totals above ``ends.T`` are valued as at ``ends.T``.

    Nothing after the bank changes these: the game ends with this turn, and the
    first seat's total is final (push-off and overtaking by this bank act on a
    player who has finished)."""
    u = rs.unit
    F = np.asarray(targets, dtype=np.int64)
    final = ends.x.score + np.arange(ends.T + 1, dtype=np.int64) * u
    wins = np.array([y == WIN for y in ends.stop_next], dtype=bool) & (ends.stop_ok != 0)
    stop = np.where(wins[:, None], 0.5 * (np.sign(final[:, None] - F[None, :]) + 1.0), 0.0)
    return stop, np.zeros_like(stop), np.zeros(len(F)), np.ones(len(F))


def _last_turn_dp(rs: Ruleset, table, ends: TurnEnds, targets) -> np.ndarray:
    """L(ends.x, F) for every F in ``targets``: the turn DP of :func:`last_turn_end_values`."""
    stop, forced, bust, win = last_turn_end_values(rs, ends, targets)
    return kernel.turn_dp(table, ends.stop_ok, stop, ends.forced_ok, forced, bust, win).start


def last_turn_ends(moves: Moves, y: PlayerState, top: int) -> TurnEnds:
    """The ends of a last turn from ``y`` that tells apart final totals up to ``top``
    (points): it runs to ``top + unit`` where a bank can win, from which every winning
    bank beats every target."""
    rs = moves.rs
    T = moves.saturation(y)
    if moves.wins(y, rs.goal - y.score):
        T = max(T, top + rs.unit - y.score)
    return TurnEnds.of(moves, y, T=T // rs.unit)


def last_turn_values(rs: Ruleset, table, y: PlayerState, targets) -> np.ndarray:
    """``L(y, F)`` for every ``F`` in ``targets`` (points, each >= the goal): the
    probability that a second-seat player in state ``y``, in the last turn after the
    first seat finished with ``F``, banks with its win condition met and a total
    above ``F`` (equal to ``F``: a tie, counted 1/2), under the play that
    maximises it. Exact (see :func:`_last_turn_ends`)."""
    ends = last_turn_ends(Moves(rs), y, int(np.max(targets)))
    return _last_turn_dp(rs, table, ends, targets)


def last_turn_table(rs: Ruleset, table, states, targets, top: int | None = None) -> np.ndarray:
    """``L`` (len(states), len(targets)) as :func:`last_turn_values`, one turn DP per
    distinct last turn (states that differ only in counters the turn does not see
    share one). ``top`` (default: the largest target) is the largest total told apart."""
    moves = Moves(rs)
    top = int(np.max(targets)) if top is None else top
    out = np.zeros((len(states), len(targets)))
    seen: dict = {}
    for i, y in enumerate(states):
        e = last_turn_ends(moves, y, top)
        key = (y.score, e.stop_ok.tobytes(), e.forced_ok.tobytes(), bytes(int(s == WIN) for s in e.stop_next))
        if key not in seen:
            seen[key] = _last_turn_dp(rs, table, e, targets)
        out[i] = seen[key]
    return out


def last_turn_horizon(rs: Ruleset, table, states, tol: float = LAST_TURN_TOL) -> int:
    """The largest final total ``F_max`` (points) the equal_turns duel tells apart.

    A first-seat player may roll on after reaching the goal to raise its final
    total ``F``; the solver values every ``F > F_max`` as ``F_max``. ``L(y, F)``
    does not increase with ``F`` and is at least ``L(y, inf)`` (the chance of an
    instant win, the only way to beat every total), so that error is at most
    ``max_y L(y, F_max) - L(y, inf)`` on every value a winning bank feeds, and a
    game has at most one first-seat win: every duel value is off by at most that
    much. Starting from one roll's best points above the goal, the extension is
    doubled until the bound is below ``tol``, then bisected down to the smallest
    extension (in units) that keeps it there. An exact barrel's win is always
    exactly the goal: ``F_max`` = goal.
    """
    if rs.barrel.kind == "exact":
        return rs.goal
    moves = Moves(rs)
    u = rs.unit
    live = [y for y in states if moves.wins(y, rs.goal - y.score)]
    if not live:
        return rs.goal
    # a target no bank reaches: only instant wins beat it
    inf = last_turn_table(rs, table, live, [np.iinfo(np.int64).max], top=rs.goal)[:, 0]

    def bound(ext: int) -> float:
        return float(np.max(last_turn_table(rs, table, live, [rs.goal + ext * u])[:, 0] - inf))

    lo, hi = 0, max(table.max_points, 1)  # extensions in units: bound(lo) >= tol > bound(hi) once found
    while bound(hi) >= tol:
        if hi * u > 1000 * rs.goal:
            raise ThousandError(
                _(
                    "{0}: a last turn beats a final total of {1} with probability {2:.1e}: no "
                    "horizon for the equal_turns duel"
                ).format(rs.name, rs.goal + hi * u, bound(hi))
            )
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # the smallest such extension: every first-seat turn runs to it
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if bound(mid) < tol else (mid, hi)
    return rs.goal + hi * u


class LastRound:
    """The rest of the round after a win with ``equal_turns`` and N players (RULES.md
    section 9): the seats after the one who met the win condition each play one last
    turn in seat order, the highest final total wins and a tie at the top among ``k``
    players is worth ``1/k`` to each.

    :meth:`chain` gives ``U(y_1, ..., y_L; B, k)``, the vector ``(u, w_1, ..., w_L)`` when
    the players in states ``y_1, ..., y_L`` still have their last turns in that order, the
    top total is ``B`` and ``k`` players share it (``u`` each):

        U(; B, k) = (1/k),
        y_1 maximises its own value, one turn DP over the columns (B, k) with
        stop[t] = u of U(y_2, ...; G, 1)       if the bank meets the win condition and G > B,
                  u of U(y_2, ...; B, k + 1)   if it does and G = B,
                  0                            otherwise (and forced ends, a bust),
        an instant win 1 (the game ends at once),

    with ``G = s + t`` its final total; the ends of that turn under those decisions then
    give every component: a new top leaves the old leaders 0, and an end that does not
    meet the win condition still acts on the players after it as any turn does
    (overtaking, push-off: ``y_2, ...`` as it leaves them), while a bank that meets it is
    settled at the win check (RULES.md section 3, step 1), as the duel reads it. Final
    totals above ``horizon`` are valued as the horizon: each later player's chance of
    beating ``F`` changes by at most :func:`last_turn_horizon`'s bound, so every value by
    at most ``L`` times it. Each player's turn runs to ``horizon + unit`` where a bank can
    win (:func:`last_turn_ends`), from which a winning bank beats every target.

    ``value(r, Y, F)`` serves the N-player solver: the vector of ``(finisher, y_1, ...,
    y_r)`` for a finisher with final total ``F`` and the r later players ``Y`` (flat
    indices into ``states``, ``y_1`` the most significant digit in base m)."""

    def __init__(self, rs: Ruleset, table, states, horizon: int):
        self.rs, self.table, self.states, self.horizon = rs, table, list(states), horizon
        self.m = len(self.states)
        self.targets = np.arange(rs.goal, horizon + 1, rs.unit, dtype=np.int64)
        self.moves = Moves(rs)
        self._chains: dict = {}
        self._rows: dict = {}
        self._filling = threading.Lock()

    def target_index(self, F) -> np.ndarray:
        """The column of final totals ``F`` (points, at least the goal; above the horizon: the horizon)."""
        F = np.minimum(np.asarray(F, dtype=np.int64), self.horizon)
        return (F - self.rs.goal) // self.rs.unit

    def value(self, r: int, Y, F) -> np.ndarray:
        """``(..., r + 1)``: the value vectors of ``(finisher, y_1, ..., y_r)`` for later
        players ``Y`` (flat) and final totals ``F`` (broadcast together)."""
        Y, F = np.broadcast_arrays(np.asarray(Y, dtype=np.int64), np.asarray(F, dtype=np.int64))
        if r == 0 or Y.size == 0:
            return np.ones(Y.shape + (r + 1,)) if r == 0 else np.zeros(Y.shape + (r + 1,))
        with self._filling:  # the N-player solver asks from several threads at once
            if r not in self._rows:  # (m**r, targets, r + 1), filled as later players are asked for
                self._rows[r] = (np.zeros((self.m**r, len(self.targets), r + 1)), np.zeros(self.m**r, dtype=bool))
            rows, done = self._rows[r]
            if not done[Y].all():
                for y in np.unique(Y[~done[Y]]):
                    rows[y] = self.chain(
                        tuple(self.states[(int(y) // self.m ** (r - 1 - k)) % self.m] for k in range(r)), 1
                    )[:, 0]
                    done[y] = True
        return rows[Y, self.target_index(F)]

    def chain(self, ys: tuple, K: int) -> np.ndarray:
        """``U(ys; B, k)`` (targets, K, len(ys) + 1) for every target ``B`` and k = 1..K."""
        key = (ys, K)
        if key not in self._chains:
            self._chains[key] = self._chain(ys, K)
        return self._chains[key]

    def _chain(self, ys: tuple, K: int) -> np.ndarray:
        nF, L = len(self.targets), len(ys)
        if not ys:
            return np.broadcast_to((1.0 / np.arange(1, K + 1))[None, :, None], (nF, K, 1)).copy()
        rs, u, moves = self.rs, self.rs.unit, self.moves
        y, rest = ys[0], ys[1:]
        nxt = self.chain(rest, K + 1)  # (nF, K+1, L)
        e = last_turn_ends(moves, y, self.horizon)
        G = y.score + np.arange(e.T + 1, dtype=np.int64) * u
        win = np.array([z == WIN for z in e.stop_next], dtype=bool) & (e.stop_ok != 0)
        B = self.targets
        beat = win[:, None] & (G[:, None] > B[None, :])  # (T+1, nF)
        tie = win[:, None] & (G[:, None] == B[None, :])
        new_top = nxt[self.target_index(np.maximum(G, rs.goal)), 0]  # (T+1, L): after a new top G
        tied = nxt[:, 1 : K + 1]  # (nF, K, L): k + 1 share B
        stop = beat[:, :, None] * new_top[:, None, None, 0] + tie[:, :, None] * tied[None, ..., 0]
        stop = stop.reshape(e.T + 1, nF * K)
        _tv, ends, bust_p, win_p = kernel.turn_ends(
            self.table, e.stop_ok, stop, e.forced_ok, np.zeros_like(stop), np.zeros(nF * K), np.ones(nF * K)
        )
        ends = ends.reshape(e.T + 1, nF, K)
        p_beat = ends * beat[:, :, None]
        p_tie = (ends * tie[:, :, None]).sum(axis=0)  # (nF, K)
        out = np.zeros((nF, K, L + 1))
        top = (p_beat.reshape(e.T + 1, nF * K).T @ new_top).reshape(nF, K, L)
        out[..., 1] = top[..., 0] + p_tie * tied[..., 0] + win_p.reshape(nF, K)
        out[..., 2:] = top[..., 1:] + p_tie[..., None] * tied[..., 1:]
        out[..., 0] = p_tie * tied[..., 0]
        # every other end (a bust, a bank short of the win condition, a mid-turn end) misses;
        # it leaves the later players as it acts on them
        # (a bank that meets the win condition below the top is settled at the win check: the
        # others as they are)
        miss = {rest: bust_p.reshape(nF, K) + (ends[win] * ~(beat | tie)[win][:, :, None]).sum(axis=0)}
        ended = np.flatnonzero(~win & ((e.stop_ok != 0) | (e.forced_ok != 0)))
        groups: dict = {}
        acts = bool(rest) and bool(rs.overtake or (rs.barrel.kind != "none" and rs.barrel.push_off != "none"))
        for t in ended:
            after = tuple(moves.affect_opponent(o, *e.others_after(moves, int(t))) for o in rest) if acts else rest
            groups.setdefault(after, []).append(t)
        for after, rows in groups.items():
            miss[after] = miss.get(after, 0.0) + ends[rows].sum(axis=0)
        for after, p in miss.items():
            left = self.chain(after, K + 1)[:, 0:K]  # k still share B
            out[..., 0] += p * left[..., 0]
            out[..., 2:] += p[..., None] * left[..., 1:]
        return out
