"""One poker-dice turn: up to ``rolls`` throws of five dice, the lock rule, the best re-rolls.

A turn state is ``(L, R)``: ``L`` the locked dice (never to be thrown again), ``R`` the dice
that may still be re-rolled, ``L + R`` the five dice showing. Roll 1 gives ``(∅, d)``.
Re-rolling ``R - Y`` for a proper part ``Y`` of ``R`` keeps ``K = L + Y``; the throw ``o``
of the ``5 - |K|`` dice then gives ``(K, o)`` under the lock rule (only the dice just
thrown may be thrown again) and ``(∅, K + o)`` with free re-rolls.

For a utility ``u`` of the final five dice (a win probability, an indicator of a hand)
the turn solves, for the throw number ``k`` of ``rolls``::

    W_rolls(L, R) = u(L + R)
    W_k(L, R)     = max( u(L + R),  max_{L ⊆ K ⊊ L + R} C_{k+1}(K) )      k < rolls
    C_k(K)        = Σ_o P(o) · W_k(next(K, o))                  o a throw of 5 - |K| dice
    value         = C_1(∅) = Σ_d P(d) · W_1(∅, d)

Many utilities are solved at once (the columns of ``U``): the game solver asks for every
best-so-far hand in one call. Ties are broken one fixed way, which matters to the other
players (their chances depend on the mover's choice even when the mover is indifferent):
stop when stopping is within :data:`TIE` of the best re-roll, else the re-roll that keeps
the most dice (then the first in the order of :func:`_submultisets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement
from math import factorial

import numpy as np

from .rules import DICE, FACES, ROLLS

TIE = 1e-12
ROLL_ID = {d: i for i, d in enumerate(ROLLS)}
# every multiset of 0..4 dice (what a player may keep), sorted tuples
KEEPS = tuple(k for n in range(DICE) for k in combinations_with_replacement(range(1, FACES + 1), n))
KEEP_ID = {k: i for i, k in enumerate(KEEPS)}


def throw_probability(o: tuple[int, ...]) -> float:
    """P(a throw of len(o) dice shows the sorted faces o)."""
    n = factorial(len(o))
    for f in set(o):
        n //= factorial(o.count(f))
    return n / FACES ** len(o)


def _submultisets(d: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every sub-multiset of the sorted tuple d, largest first (each once)."""
    out = {()}
    for f in d:
        out |= {tuple(sorted(s + (f,))) for s in out}
    return sorted(out, key=lambda s: (-len(s), s))


def _minus(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    rest = list(a)
    for f in b:
        rest.remove(f)
    return tuple(rest)


class TurnShape:
    """The states, choices and throws of one turn under the lock rule or free re-rolls
    (the same for every utility; built once per rule, :func:`turn_shape`).

    The throws are kept as pairs ``(K, state, P)`` (the state a throw from keep ``K``
    leads to), sorted by ``K`` for the backward sums and by state for the forward ones:
    numpy's ``reduceat`` does both, without a sparse-matrix library to import."""

    def __init__(self, lock_kept: bool):
        self.lock_kept = lock_kept
        throws = {n: list(combinations_with_replacement(range(1, FACES + 1), n)) for n in range(DICE + 1)}
        if lock_kept:
            states = [(k, o) for k in KEEPS for o in throws[DICE - len(k)]]
        else:
            states = [((), d) for d in ROLLS]
        self.states = states
        self.state_id = {s: i for i, s in enumerate(states)}
        self.roll_of_state = np.array([ROLL_ID[tuple(sorted(l + r))] for l, r in states], dtype=np.intp)
        subs = {}
        choices = []
        for locked, free in states:
            if free not in subs:
                subs[free] = [y for y in _submultisets(free) if len(y) < len(free)]
            choices.append([KEEP_ID[tuple(sorted(locked + y))] if locked else KEEP_ID[y] for y in subs[free]])
        self.choices = choices
        width = max(len(c) for c in choices)
        pad = len(KEEPS)  # a row of -inf appended to C
        self.choice_matrix = np.full((len(states), width), pad, dtype=np.intp)
        for i, c in enumerate(choices):
            self.choice_matrix[i, :len(c)] = c
        keep, state, prob = [], [], []
        p_of = {o: throw_probability(o) for n in range(DICE + 1) for o in throws[n]}
        for ki, k in enumerate(KEEPS):
            for o in throws[DICE - len(k)]:
                keep.append(ki)
                state.append(self.state_id[(k, o)] if lock_kept else ROLL_ID[tuple(sorted(k + o))])
                prob.append(p_of[o])
        self.pair_keep = np.array(keep, dtype=np.intp)        # sorted by keep
        self.pair_state = np.array(state, dtype=np.intp)
        self.pair_prob = np.array(prob)
        self.keep_starts = np.flatnonzero(np.r_[True, np.diff(self.pair_keep) != 0])
        self.by_state = np.argsort(self.pair_state, kind="stable")
        ps = self.pair_state[self.by_state]
        self.state_starts = np.flatnonzero(np.r_[True, np.diff(ps) != 0])
        self.by_roll = np.argsort(self.roll_of_state, kind="stable")
        rs = self.roll_of_state[self.by_roll]
        self.roll_starts = np.flatnonzero(np.r_[True, np.diff(rs) != 0])
        first = self.pair_keep == KEEP_ID[()]
        self.start = np.zeros(len(states))                    # P(roll 1 gives state s)
        self.start[self.pair_state[first]] = self.pair_prob[first]
        self.first = np.flatnonzero(self.start)               # the states roll 1 can give

    # arrays are (B, ...): one row per utility, so that each row's gathers are contiguous

    def expect(self, W: np.ndarray) -> np.ndarray:
        """``C(K) = Σ_o P(o) W(next(K, o))`` for every keep (B x keeps)."""
        return np.add.reduceat(W[:, self.pair_state] * self.pair_prob, self.keep_starts, axis=1)

    def spread(self, kept: np.ndarray) -> np.ndarray:
        """The transpose of :meth:`expect`: mass on keeps -> mass on the states thrown to."""
        m = (kept[:, self.pair_keep] * self.pair_prob)[:, self.by_state]
        return np.add.reduceat(m, self.state_starts, axis=1)

    def to_rolls(self, mass: np.ndarray) -> np.ndarray:
        """Mass on states -> mass on the 252 rolls they show."""
        return np.add.reduceat(mass[:, self.by_roll], self.roll_starts, axis=1)

    def state_of(self, locked: tuple[int, ...], free: tuple[int, ...]) -> int:
        if not self.lock_kept:
            free, locked = tuple(sorted(locked + free)), ()
        return self.state_id[(tuple(sorted(locked)), tuple(sorted(free)))]


@lru_cache(maxsize=2)
def turn_shape(lock_kept: bool) -> TurnShape:
    return TurnShape(lock_kept)


@dataclass
class TurnSolution:
    """The solved turn for the rows of ``U``: ``value`` (B,), and for every throw number
    k (1-based) ``W[k]`` (B x states; at k = 1 only the states of a first throw),
    ``C[k]`` (B x keeps, k >= 2), ``action[k]`` (B x states: -1 stop, else the keep id;
    k < rolls)."""

    shape: TurnShape
    rolls: int
    value: np.ndarray
    W: dict
    C: dict
    action: dict

    def final_distribution(self) -> np.ndarray:
        """P(the turn ends with each of the 252 rolls) under the chosen actions (B x 252)."""
        sh, b = self.shape, self.value.shape[0]
        nk = len(KEEPS)
        mass = np.repeat(sh.start[None, :], b, axis=0)
        final = np.zeros((b, len(ROLLS)))
        rows = np.arange(b)[:, None] * nk
        for k in range(1, self.rolls):
            a = self.action[k]
            stop = a < 0
            final += sh.to_rolls(np.where(stop, mass, 0.0))
            go = ~stop & (mass > 0)
            kept = np.bincount((a + rows)[go], weights=mass[go], minlength=nk * b).reshape(b, nk)
            mass = sh.spread(kept)
        final += sh.to_rolls(mass)
        return final


def solve_turn(shape: TurnShape, rolls: int, U: np.ndarray) -> TurnSolution:
    """Solve the turn for every row of ``U`` (B utilities x 252 rolls); the Bellman
    equations of the module docstring, the tie rule of :data:`TIE`."""
    U = np.atleast_2d(np.asarray(U, dtype=np.float64))
    b = U.shape[0]
    stopv = U[:, shape.roll_of_state]                    # B x states
    W = {rolls: stopv}
    C, action = {}, {}
    for k in range(rolls - 1, 0, -1):
        Ck = shape.expect(W[k + 1])                      # B x keeps
        C[k + 1] = Ck
        ext = np.hstack([Ck, np.full((b, 1), -np.inf)])
        # at throw 1 only the states a first throw gives are needed (the others stay 0, -1)
        rows = shape.first if k == 1 else np.arange(len(shape.states))
        cm = shape.choice_matrix[rows]
        at = np.arange(len(rows))
        Wk = np.zeros_like(stopv)
        ak = np.full(stopv.shape, -1, dtype=np.intp)
        for r in range(b):                               # a row at a time: contiguous gathers
            vals = ext[r][cm]                            # states x choices
            bi = vals.argmax(axis=1)
            best = vals[at, bi]
            sv = stopv[r, rows]
            stop = sv >= best - TIE
            Wk[r, rows] = np.where(stop, sv, best)
            ak[r, rows] = np.where(stop, -1, cm[at, bi])
        W[k], action[k] = Wk, ak
    value = W[1][:, shape.first] @ shape.start[shape.first]
    return TurnSolution(shape, rolls, value, W, C, action)
