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
stop when stopping is within :data:`TIE` of the best re-roll, else the first best keep in
the subset lattice below (where keeping a die and re-rolling it are worth exactly the same,
it is kept). The best keep is found by a max-transform over that lattice,
``G(L, R') = max(C(L + R'), max_f G(L, R' - f))``, a few operations per state instead of
one per part of the re-rollable dice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement
from math import factorial

import numpy as np

from thousand.rules.poker import DICE, FACES, ROLLS

__all__ = [
    "KEEPS",
    "KEEP_ID",
    "ROLL_ID",
    "TIE",
    "TurnShape",
    "TurnSolution",
    "solve_turn",
    "throw_probability",
    "turn_shape",
]

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
        self.roll_of_state = np.array([ROLL_ID[tuple(sorted(kept + r))] for kept, r in states], dtype=np.intp)
        # the subset lattice: G(L, R') = max(C(L + R'), max_f G(L, R' - f)) is the best keep
        # L ⊆ K ⊆ L + R'; a state (L, R) then chooses among G(L, R - f), f a face of R
        nodes = [(k, r) for k in (KEEPS if lock_kept else [()]) for n in range(DICE - len(k)) for r in throws[n]]
        nodes.sort(key=lambda kr: len(kr[1]))
        node_id = {kr: i for i, kr in enumerate(nodes)}
        pad = len(nodes)  # a slot of -inf

        def preds(locked, free):
            return [node_id[(locked, _minus(free, (f,)))] for f in sorted(set(free))]

        self.node_keep = np.array([KEEP_ID[tuple(sorted(k + r))] for k, r in nodes], dtype=np.intp)
        width = max(len(set(r)) for _, r in nodes) or 1
        self.node_pred = np.full((len(nodes), width), pad, dtype=np.intp)
        for i, (k, r) in enumerate(nodes):
            p = preds(k, r)
            self.node_pred[i, : len(p)] = p
        sizes = np.array([len(r) for _, r in nodes])
        self.layers = [np.flatnonzero(sizes == n) for n in range(DICE)]
        self.state_pred = np.full((len(states), DICE), pad, dtype=np.intp)
        for i, (k, r) in enumerate(states):
            p = preds(k, r)
            self.state_pred[i, : len(p)] = p
        self.nodes = len(nodes)
        keep, state, prob = [], [], []
        p_of = {o: throw_probability(o) for n in range(DICE + 1) for o in throws[n]}
        for ki, k in enumerate(KEEPS):
            for o in throws[DICE - len(k)]:
                keep.append(ki)
                state.append(self.state_id[(k, o)] if lock_kept else ROLL_ID[tuple(sorted(k + o))])
                prob.append(p_of[o])
        self.pair_keep = np.array(keep, dtype=np.intp)  # sorted by keep
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
        self.start = np.zeros(len(states))  # P(roll 1 gives state s)
        self.start[self.pair_state[first]] = self.pair_prob[first]
        self.first = np.flatnonzero(self.start)  # the states roll 1 can give

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


def _better(best, arg, G, Garg, idx):
    """The elementwise better of (best, arg) and the rows ``idx`` of (G, Garg); ties keep best."""
    v = G[idx]
    up = v > best
    return np.where(up, v, best), np.where(up, Garg[idx], arg)


def solve_turn(shape: TurnShape, rolls: int, U: np.ndarray) -> TurnSolution:
    """Solve the turn for every row of ``U`` (B utilities x 252 rolls); the Bellman
    equations of the module docstring, the tie rule of :data:`TIE`."""
    U = np.atleast_2d(np.asarray(U, dtype=np.float64))
    b = U.shape[0]
    stopv = U[:, shape.roll_of_state]  # B x states
    W = {rolls: stopv}
    C, action = {}, {}
    for k in range(rolls - 1, 0, -1):
        Ck = shape.expect(W[k + 1])  # B x keeps
        C[k + 1] = Ck
        # the lattice runs with utilities in the last axis: each gather copies whole rows
        Ct = np.ascontiguousarray(Ck.T)  # keeps x B
        G = np.full((shape.nodes + 1, b), -np.inf)
        Garg = np.full((shape.nodes + 1, b), -1, dtype=np.intp)
        for layer in shape.layers:  # |R'| = 0, 1, ..., 4
            keep = shape.node_keep[layer]
            best, arg = Ct[keep], np.broadcast_to(keep[:, None], (len(layer), b))
            for c in range(shape.node_pred.shape[1]):  # keeping every die of R' wins ties
                best, arg = _better(best, arg, G, Garg, shape.node_pred[layer, c])
            G[layer], Garg[layer] = best, arg
        # at throw 1 only the states a first throw gives are needed (the others stay 0, -1)
        rows = shape.first if k == 1 else np.arange(len(shape.states))
        pred = shape.state_pred[rows]
        best, arg = G[pred[:, 0]], Garg[pred[:, 0]]
        for c in range(1, pred.shape[1]):
            best, arg = _better(best, arg, G, Garg, pred[:, c])
        sv = stopv[:, rows].T
        stop = sv >= best - TIE
        Wk = np.zeros_like(stopv)
        ak = np.full(stopv.shape, -1, dtype=np.intp)
        Wk[:, rows] = np.where(stop, sv, best).T
        ak[:, rows] = np.where(stop, -1, arg).T
        W[k], action[k] = Wk, ak
    value = W[1][:, shape.first] @ shape.start[shape.first]
    return TurnSolution(shape, rolls, value, W, C, action)
