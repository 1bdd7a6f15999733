"""Independent exact solvers for tiny games, in fractions.

Nothing here uses the kernel or its roll classes: rolls are enumerated one
sorted multiset at a time and scored by :class:`thousand.rules.scoring.RollScorer`,
the turn is solved by plain memoised recursion, and the game-level fixed
point by policy iteration with exact policy evaluation (Gaussian elimination
over Fractions), then checked to be a fixed point exactly.

Limits (fine for the tiny test rulesets): at totals from which banking is
allowed and leads to the best possible outcome (the saturation of
:meth:`Moves.saturation`, with no instant-win patterns), banking is taken as
optimal and a compulsory roll there is solved in closed form.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement
from math import factorial

from thousand.engine.player import WIN, Moves, PlayerState
from thousand.rules.scoring import RollScorer


def sorted_rolls(n: int, faces: int):
    """(roll, probability) for every sorted roll of n dice."""
    total = faces**n
    for roll in combinations_with_replacement(range(1, faces + 1), n):
        w = factorial(n)
        for f in set(roll):
            w //= factorial(roll.count(f))
        yield roll, Fraction(w, total)


class TurnReference:
    """Solves one turn exactly for given end values; returns value and end distribution."""

    def __init__(self, rs, floats: bool = False):
        self.rs = rs
        self.moves = Moves(rs)
        self.scorer = RollScorer(rs)
        # floats: the roll probabilities as floats (the same recursion, for tests whose end
        # values are floats anyway and whose turns are long)
        self.rolls = {
            n: [(r, float(p) if floats else p) for r, p in sorted_rolls(n, rs.faces)] for n in range(1, rs.dice + 1)
        }
        # the numbers of the recursion: with floats, float 0 and 1 too (a Fraction among
        # floats gives the same float, through Fraction's slow mixed arithmetic)
        self.zero, self.one = (0.0, 1.0) if floats else (Fraction(0), Fraction(1))
        self.options = {}
        for lst in self.rolls.values():
            for roll, _ in lst:
                self.options[roll] = (self.scorer.is_instant_win(roll), self.scorer.set_asides(roll))

    def solve(self, x: PlayerState, end_value, label=None, sat=None):
        """(value, {outcome: probability}) of the turn from ``x`` with optimal play.

        ``label(kind, t)`` names how the turn ended (``kind`` is "stop",
        "forced", "bust" or "win"; by default the mover's end state, WIN for a
        win) and ``end_value(outcome)`` values it. ``sat`` (points; default
        :meth:`Moves.saturation`) is a total from which banking, where allowed,
        is the best outcome.
        """
        rs, mv = self.rs, self.moves
        zero, one = self.zero, self.one
        sat = mv.saturation(x) if sat is None else sat
        N = rs.dice
        if label is None:

            def label(kind, t):
                if kind == "stop":
                    return mv.bank(x, t)
                if kind == "forced":
                    return mv.mid_turn_end(x, t, mv.mid_turn(x, t))
                return mv.zero(x) if kind == "bust" else WIN

        bust_state = label("bust", 0)
        win_state = label("win", 0)

        def add(d, k, p):
            d[k] = d.get(k, 0) + p

        def stop_here(t):
            y = label("stop", t)
            return end_value(y), {y: one}

        def forced_here(t):
            if not mv.mid_turn(x, t):
                return None
            y = label("forced", t)
            return end_value(y), {y: one}

        @cache
        def decision(t, n):
            roll_v = None
            if mv.can_bank(x, t):
                sv = stop_here(t)
                if t >= sat:
                    return sv
                roll_v = roll(t, n, False)
                return sv if sv[0] >= roll_v[0] else roll_v
            return roll(t, n, False)

        @cache
        def after(t, m, confirm):
            f = forced_here(t)
            if f:
                return f
            if confirm and mv.can_bank(x, t):
                return stop_here(t)
            if m == 0:
                if rs.hot_dice == "free":
                    return decision(t, N)
                if t >= sat and mv.can_bank(x, t):
                    return tail_compulsory(t, rs.hot_dice == "confirm")
                return roll(t, N, rs.hot_dice == "confirm")
            return decision(t, m)

        def tail_compulsory(t, confirm):
            # h = sum over rolls: non-hot options end by banking (the best outcome),
            # rolls whose only options take every die come back to h
            sv, sd = stop_here(t)
            p_back = zero
            val, dist = zero, {}
            for r, p in self.rolls[N]:
                inst, opts = self.options[r]
                if inst:
                    val += p * end_value(win_state)
                    add(dist, win_state, p)
                elif not opts:
                    val += p * end_value(bust_state)
                    add(dist, bust_state, p)
                elif confirm or any(len(k) < N for _, k in opts):
                    val += p * sv
                    for k, q in sd.items():
                        add(dist, k, p * q)
                else:
                    p_back += p
            scale = 1 / (1 - p_back)
            return val * scale, {k: q * scale for k, q in dist.items()}

        @cache
        def roll(t, n, confirm):
            val, dist = zero, {}
            for r, p in self.rolls[n]:
                inst, opts = self.options[r]
                if inst:
                    v, d = end_value(win_state), {win_state: one}
                elif not opts:
                    v, d = end_value(bust_state), {bust_state: one}
                else:
                    v, d = None, None
                    for pts, kept in opts:
                        cand = after(t + pts, n - len(kept), confirm)
                        if v is None or cand[0] > v:
                            v, d = cand
                val += p * v
                get = dist.get  # the hottest loop of the tests: no call per entry
                for k, q in d.items():
                    dist[k] = get(k, zero) + p * q
            return val, dist

        return roll(0, N, False)


def solve_linear(A, b):
    """Solve A x = b over Fractions (Gauss-Jordan)."""
    n = len(b)
    M = [row[:] + [b[i]] for i, row in enumerate(A)]
    for c in range(n):
        piv = next(r for r in range(c, n) if M[r][c] != 0)
        M[c], M[piv] = M[piv], M[c]
        inv = 1 / M[c][c]
        M[c] = [v * inv for v in M[c]]
        for r in range(n):
            if r != c and M[r][c] != 0:
                f = M[r][c]
                M[r] = [a - f * b_ for a, b_ in zip(M[r], M[c])]
    return [M[i][n] for i in range(n)]


def exact_race(rs, states, guess):
    """Exact expected turns to win alone for each state in ``states`` (a closed set).

    ``guess`` (expected turns per state, e.g. a float solution) only picks the
    first policy: policies are evaluated exactly and improved greedily until
    stable, and the result is then checked to satisfy the Bellman equation
    exactly, which certifies it whatever the guess was.
    """
    ref = TurnReference(rs)
    idx = {x: i for i, x in enumerate(states)}
    n = len(states)
    J = [-Fraction(g).limit_denominator(10**12) for g in guess]  # J = -(expected turns)

    def ev(y):
        return Fraction(0) if y == WIN else J[idx[y]]

    for _ in range(50):
        dists = [ref.solve(x, ev)[1] for x in states]
        A = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
        b = [Fraction(-1)] * n
        for i, d in enumerate(dists):
            for y, p in d.items():
                if y != WIN:
                    A[i][idx[y]] -= p
        J_new = solve_linear(A, b)
        if J_new == J:
            break
        J = J_new
    for i, x in enumerate(states):  # the exact fixed point
        assert -1 + ref.solve(x, ev)[0] == J[i]
    return {x: -J[i] for i, x in enumerate(states)}


def exact_last_turn(rs, y: PlayerState, F: int, ref: TurnReference | None = None) -> Fraction:
    """Exact L(y, F): the second seat in state ``y`` plays one last turn against the
    first seat's final total ``F``; it scores 1 for a bank that meets its win
    condition with a total above F, 1/2 for one equal to F, 0 for any other end
    (another bank, a bust, a mid-turn end), 1 for an instant win. From totals
    beyond F a winning bank scores the best possible, so ``sat`` = F + unit - s."""
    ref = ref or TurnReference(rs)
    mv = ref.moves

    def label(kind, t):
        return (kind, t)

    def value(o):
        kind, t = o
        if kind == "win":
            return Fraction(1)
        if kind == "stop" and mv.bank(y, t) == WIN:
            total = y.score + t
            return Fraction(1) if total > F else (Fraction(1, 2) if total == F else Fraction(0))
        return Fraction(0)

    sat = max(mv.saturation(y), F + rs.unit - y.score) if mv.wins(y, rs.goal - y.score) else None
    return ref.solve(y, value, label, sat=sat)[0]


def exact_duel(rs, states, guess, horizon=None):
    """Exact win probabilities of the mover for every pair of ``states`` (a closed set).

    ``guess`` (e.g. a float solution) picks the first policies: ``guess[i][j]``,
    or with ``equal_turns`` ``guess[seat][i][j]``. Policies are evaluated exactly
    (``(I + D) P = b``, where ``D`` holds the probabilities of the turn ending in
    each pair and ``b`` the value of the turn's terminal ends) and improved until
    the result is an exact fixed point of the duel's Bellman equation, which is
    asserted.

    Without ``equal_turns`` the keys are ``(x, y)``; with it ``(seat, x, y)``:
    the mover ``x`` in ``seat`` (0 first, 1 second) against ``y`` in the other.
    A second-seat win, and an instant win, are final (value 1); a first-seat
    bank that wins with total ``s + t`` is worth ``1 - L(y, F)``
    (:func:`exact_last_turn`) with ``F = min(s + t, horizon)``: the game the
    solver solves, in which final totals above ``horizon`` (points) count as
    ``horizon``. The first seat then banks at once from ``horizon`` on (no
    total is worth more: the sat of its turns), which is optimal there without
    instant-win patterns.
    """
    ref = TurnReference(rs)
    mv = ref.moves
    equal = bool(rs.equal_turns)
    # first-seat turns run to the horizon: the memoised recursion goes one total deeper per roll
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    seats = (0, 1) if equal else (None,)
    pairs = [(seat, x, y) for seat in seats for x in states for y in states]
    idx = {p: k for k, p in enumerate(pairs)}
    pos = {x: i for i, x in enumerate(states)}
    P = {
        p: Fraction(
            float(guess[p[0]][pos[p[1]]][pos[p[2]]] if equal else guess[pos[p[1]]][pos[p[2]]])
        ).limit_denominator(10**12)
        for p in pairs
    }
    last: dict = {}

    def other(seat):
        return None if seat is None else 1 - seat

    def labeller(seat, x, y):
        def label(kind, t):
            if kind == "win":
                return WIN
            if kind == "bust":
                return (other(seat), y, mv.zero(x))
            ev = mv.mid_turn(x, t) if kind == "forced" else None
            x2 = mv.mid_turn_end(x, t, ev) if ev else mv.bank(x, t)
            if x2 == WIN:
                # the first seat's win leaves the opponent, as it stands, a last turn
                return ("last", y, min(x.score + t, horizon)) if seat == 0 else WIN
            if ev == "overshoot":
                return (other(seat), y, x2)
            return (other(seat), mv.affect_opponent(y, x.score, mv.raised_to(x, t), mv.climbed(x, x2)), x2)

        return label

    def sat_of(seat, x):
        if seat == 0 and mv.wins(x, rs.goal - x.score):
            return max(mv.saturation(x), horizon - x.score)
        return None

    def terminal(o):
        """The value of an end that leaves no pair to play, or None."""
        if o == WIN:
            return Fraction(1)
        if o[0] == "last":
            if o[1:] not in last:
                last[o[1:]] = exact_last_turn(rs, o[1], o[2], ref)
            return 1 - last[o[1:]]
        return None

    def value(o):
        v = terminal(o)
        return 1 - P[o] if v is None else v

    def turn(p):
        return ref.solve(p[1], value, labeller(*p), sat=sat_of(p[0], p[1]))

    n = len(pairs)
    for _ in range(20):
        dists = [turn(p)[1] for p in pairs]
        A = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
        b = [Fraction(0)] * n
        for i, d in enumerate(dists):
            for o, q in d.items():
                v = terminal(o)
                if v is None:  # P_i = ... + q (1 - P_o)
                    A[i][idx[o]] += q
                    b[i] += q
                else:
                    b[i] += q * v
        sol = solve_linear(A, b)
        new = {p: sol[k] for k, p in enumerate(pairs)}
        if new == P:
            break
        P = new
    for p in pairs:
        assert turn(p)[0] == P[p]
    return P if equal else {(x, y): v for (_, x, y), v in P.items()}
