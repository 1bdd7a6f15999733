"""Poker dice for any number of players: exact play for every seat, by backward induction.

Seats play one turn each, in order; every player sees the earlier results. What matters
to the player to move is the best hand so far ``b`` (a strength, :class:`HandTable`),
how many earlier players hold it (``m``, the *holders*, in seat order) and how many
players are still to play including the mover (``n``). A tie at the top among ``m``
players at the end is a replay of the whole game among them in their seat order, worth
``V_m[j]`` to the one in place ``j`` (``V_m`` the seat values of the m-player game).

``T[n, m][b, j]`` is the chance that the holder in place ``j`` of ``m`` holders of ``b``
wins when ``n`` players are still to play (each for their own win)::

    T[0, 1][b, 0] = 1,    T[0, m][b, j] = V_m[j]                                  (m >= 2)
    T[n, m][b, j] = P_<(b, m, n) · T[n-1, m][b, j] + P_=(b, m, n) · T[n-1, m+1][b, j]

where ``P_<`` and ``P_=`` are the chances that the mover ends below ``b`` or level with
it when playing the turn (:mod:`thousand.engine.poker`) that maximises their own win::

    u(h) = 0 (h < b),   T[n-1, m+1][b, m] (h = b),   T[n-1, 1][h, 0] (h > b)

(the first player, with no hand to beat, has ``u(h) = T[n-1, 1][h, 0]``). None of this
depends on the number of seats that already lost, so one set of tables serves every
number of players up to the one solved. ``V_M`` itself appears on the right through the
all-tie replay: for each ``M`` the values are iterated to the fixed point ``V_M`` (the
chance that all M tie is small, so this converges in a few rounds; the last change is
reported as the residual). The result is a subgame-perfect equilibrium; where a mover is
indifferent the turn's fixed tie rule (:data:`thousand.engine.poker.TIE`) picks the move.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from thousand.base.errors import RulesetError, StateError
from thousand.base.i18n import _
from thousand.engine.poker import TurnSolution, solve_turn, turn_shape
from thousand.rules.poker import ROLLS, PokerRuleset

__all__ = ["FIXED_POINT_TOL", "MAX_PLAYERS", "MAX_ROUNDS", "PokerSolution", "situation_of", "solve_poker"]

MAX_PLAYERS = 8  # the source: "лучше до 8"
FIXED_POINT_TOL = 1e-15
MAX_ROUNDS = 60


@dataclass
class PokerSolution:
    """The solved game for up to ``players`` seats: ``T[(n, m)]`` (strengths x m) as in the
    module docstring, ``seat_values[M]`` (the chance of each seat of an M-player game),
    ``rounds[M]`` and ``residual[M]`` of the fixed point, ``replay[M]`` (the chance that
    all M tie and replay)."""

    rs: PokerRuleset
    players: int
    T: dict
    seat_values: dict
    rounds: dict = field(default_factory=dict)
    residual: dict = field(default_factory=dict)
    replay: dict = field(default_factory=dict)
    seconds: float = 0.0
    solved_now: bool = False

    objective = "poker"

    def __post_init__(self):
        hands = self.rs.hands
        self.H = hands.count
        self.strength_of_roll = np.array([hands.strength(d) for d in ROLLS], dtype=np.intp)

    # ------------------------------------------------------------ the mover

    def check_situation(self, best: int | None, holders: int, remaining: int) -> None:
        if remaining < 1:
            raise StateError(_("the mover is one of the players still to play (remaining >= 1)"))
        if best is None:
            if holders:
                raise StateError(_("holders of a best hand need the hand (--to-beat)"))
        elif not 0 <= best < self.H:
            raise StateError(_("hand strength {0} is not one of the {1} hands").format(best, self.H))
        elif holders < 1:
            raise StateError(_("a best hand so far has at least one holder"))
        total = holders + remaining if best is not None else remaining
        if total > self.players:
            raise StateError(_("{0} players at least; the table is solved for up to {1}").format(total, self.players))

    def utility(self, best: int | None, holders: int, remaining: int) -> np.ndarray:
        """The mover's chance of winning for each final hand strength (the ``u`` above)."""
        self.check_situation(best, holders, remaining)
        lead = self.T[(remaining - 1, 1)][:, 0]
        if best is None:
            return lead.copy()
        u = np.where(np.arange(self.H) > best, lead, 0.0)
        u[best] = self.T[(remaining - 1, holders + 1)][best, holders]
        return u

    def turn(self, best: int | None, holders: int, remaining: int) -> TurnSolution:
        """The mover's solved turn (its value, every state's value, the best actions)."""
        u = self.utility(best, holders, remaining)
        return solve_turn(turn_shape(self.rs.lock_kept), self.rs.rolls, u[self.strength_of_roll])

    def advise(self, dice, throw: int = 1, rerollable=None, to_beat=None, holders: int | None = None, after: int = 0):
        """Advice for the player to move: ``dice`` showing after throw ``throw``,
        ``rerollable`` (the lock rule; default all), ``to_beat`` (the dice or name of the
        best hand so far, None for the first player) held by ``holders`` (default 1),
        ``after`` players still to play. Returns a :class:`PokerAdvice`."""
        from .poker_advice import advise, turn_state

        st = turn_state(self.rs, dice, throw, rerollable)
        return advise(self.rs, self, situation_of(self.rs, to_beat, holders, after), st)

    def movers(self, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
        """For every best hand b with ``m`` holders and ``n`` to play (the mover included):
        the mover's chance of winning (H,) and the final hand distribution of its optimal
        turn (H x H), as the solve computed them (cached)."""
        cache = self.__dict__.setdefault("_movers", {})
        if (n, m) not in cache:
            idx = np.arange(self.H)
            U = np.where(idx[None, :] > idx[:, None], self.T[(n - 1, 1)][:, 0][None, :], 0.0)
            U[idx, idx] = self.T[(n - 1, m + 1)][:, m]
            cache[(n, m)] = _batch(self.rs, self.strength_of_roll, U, self.H)
        return cache[(n, m)]

    def situations(self, M: int, seat: int) -> dict:
        """The distribution of what seat ``seat`` (0-based) of an M-player game faces under
        equilibrium play: holders -> (H,) probabilities of the best hand (seat 0: {0: None})."""
        if not 0 <= seat < M <= self.players:
            raise StateError(_("seat {0} of {1} players: the table covers up to {2}").format(seat + 1, M, self.players))
        if seat == 0:
            return {0: None}
        _r, f0 = _batch(self.rs, self.strength_of_roll, self.T[(M - 1, 1)][:, 0][None, :], self.H)
        D = {1: f0[0]}
        for i in range(1, seat):
            D = _advance(D, M - i, lambda n, m: self.movers(n, m)[1])
        return D

    def start_value(self) -> np.ndarray:
        """Each seat's chance in a game of all ``players`` seats, the first to throw first."""
        return np.asarray(self.seat_values[self.players])

    def summary(self) -> dict:
        return {**self.to_json(), "solve_seconds": round(self.seconds, 3), "solved_now": self.solved_now}

    def describe(self) -> str:
        seats = ", ".join(f"seat {k + 1} {v:.6f}" for k, v in enumerate(self.start_value()))
        return f"{self.rs.name}, {self.players} players: P(win) by seat with optimal play: {seats}"

    def to_json(self) -> dict:
        return {
            "players": self.players,
            "seat_values": {str(k): list(v) for k, v in self.seat_values.items()},
            "rounds": self.rounds,
            "residual": self.residual,
            "replay": self.replay,
        }


def _batch(rs: PokerRuleset, strength_of_roll: np.ndarray, U: np.ndarray, H: int):
    """Solve the turn for the rows of U (utilities over strengths); returns the mover's
    values (B,) and final strength distributions (B x H)."""
    sol = solve_turn(turn_shape(rs.lock_kept), rs.rolls, U[:, strength_of_roll])
    by_roll = sol.final_distribution()
    F = np.zeros((U.shape[0], H))
    np.add.at(F.T, strength_of_roll, by_roll.T)
    return sol.value, F


def solve_poker(rs: PokerRuleset, players: int, progress=None) -> PokerSolution:
    """Solve every situation of games of up to ``players`` seats (module docstring)."""
    if not 1 <= players <= MAX_PLAYERS:
        raise RulesetError(_("poker dice is solved for 1 to {0} players, not {1}").format(MAX_PLAYERS, players))
    t0 = time.perf_counter()
    hands = rs.hands
    H = hands.count
    sor = np.array([hands.strength(d) for d in ROLLS], dtype=np.intp)
    idx = np.arange(H)
    above = idx[None, :] > idx[:, None]  # [b, h]: h beats b
    below = idx[None, :] < idx[:, None]
    T = {(0, 1): np.ones((H, 1))}
    value, F = {}, {}  # per (n, m): the mover's values and final hands
    seat_values = {1: np.ones(1)}
    rounds, residual, replay = {}, {}, {}
    for M in range(2, players + 1):
        V = np.full(M, 1.0 / M)
        history = []
        for it in range(1, MAX_ROUNDS + 1):
            T[(0, M)] = np.tile(V, (H, 1))
            for n in range(1, M):  # the diagonal n + m = M, n increasing
                m = M - n
                lead = T[(n - 1, 1)][:, 0]
                U = np.where(above, lead[None, :], 0.0)
                U[idx, idx] = T[(n - 1, m + 1)][:, m]
                value[(n, m)], F[(n, m)] = _batch(rs, sor, U, H)
                plo = (F[(n, m)] * below).sum(axis=1)
                peq = F[(n, m)][idx, idx]
                T[(n, m)] = plo[:, None] * T[(n - 1, m)] + peq[:, None] * T[(n - 1, m + 1)][:, :m]
            v0, f0 = _batch(rs, sor, T[(M - 1, 1)][:, 0][None, :], H)
            new, tie = _seat_values(M, v0[0], f0[0], value, F)
            change = float(np.abs(new - V).max())
            history.append(new)
            V = new
            if len(history) >= 3 and change > FIXED_POINT_TOL:
                # the map is affine in V_M while the policies hold still: Aitken's step
                a, b, c = history[-3:]
                d1, d2 = b - a, c - b
                den = d2 - d1
                ok = np.abs(den) > 1e-300
                V = np.where(ok, c - d2 * d2 / np.where(ok, den, 1.0), c)
                V = V / V.sum()
            if change <= FIXED_POINT_TOL:
                break
            if progress:
                progress(M, it, change)
        # the values every table entry was computed with (the last round moved them by `change`)
        seat_values[M], rounds[M], residual[M], replay[M] = T[(0, M)][0].copy(), it, change, tie
    T = {k: v for k, v in T.items() if sum(k) <= players}
    return PokerSolution(rs, players, T, seat_values, rounds, residual, replay, time.perf_counter() - t0)


def _advance(D: dict, n: int, final_of) -> dict:
    """The situations after one more seat: ``D`` maps holders m -> (H,) probabilities of the
    best hand; the mover (n to play) ends below, level with or above it as ``final_of(n, m)``
    (H x H: best hand -> final hand distribution) says."""
    nxt: dict[int, np.ndarray] = {}
    for m, d in D.items():
        Fm = final_of(n, m)
        H = Fm.shape[0]
        idx = np.arange(H)
        below = idx[None, :] < idx[:, None]
        above = ~below & (idx[None, :] != idx[:, None])
        nxt[m] = nxt.get(m, 0) + d * (Fm * below).sum(axis=1)
        nxt[m + 1] = nxt.get(m + 1, 0) + d * Fm[idx, idx]
        nxt[1] = nxt.get(1, 0) + (d[:, None] * Fm * above).sum(axis=0)
    return nxt


def _seat_values(M, v0, f0, value, F):
    """Forward over the seats of an M-player game: the chance of each seat to win, and
    the chance that all M tie (a replay)."""
    out = np.zeros(M)
    out[0] = v0
    D = {1: f0.copy()}
    for i in range(1, M):
        n = M - i
        out[i] = sum(float(D[m] @ value[(n, m)]) for m in D)
        D = _advance(D, n, lambda n, m: F[(n, m)])
    return out, float(D.get(M, np.zeros(1)).sum())


def situation_of(rs: PokerRuleset, to_beat=None, holders: int | None = None, after: int = 0):
    """A checked :class:`Situation` from what a player at the table knows: the best hand so
    far (five dice, a :class:`Hand`, or a name such as ``four:6``; None for the first
    player), how many hold it (default 1), how many play after the mover."""
    from thousand.rules.poker import Hand

    from .poker_advice import Situation

    if after < 0:
        raise StateError(_("players after you: {0} is not a count").format(after))
    if to_beat is None:
        if holders:
            raise StateError(_("holders of the best hand need the hand itself (--to-beat)"))
        if after < 1:
            raise StateError(_("the first player to move has at least one player after them (--after N)"))
        best, holders = None, 0
    else:
        h = (
            to_beat
            if isinstance(to_beat, Hand)
            else (rs.parse_hand(to_beat) if isinstance(to_beat, str) else rs.hand(to_beat))
        )
        best = rs.hands.strength(h.dice)
        holders = 1 if holders is None else holders
        if holders < 1:
            raise StateError(_("a best hand so far is held by at least one player, not {0}").format(holders))
    s = Situation(best, holders, after)
    if s.players > MAX_PLAYERS:
        raise StateError(_("{0} players: poker dice is solved for up to {1}").format(s.players, MAX_PLAYERS))
    return s


# --------------------------------------------------------------------------- stored tables
