"""An independent poker-dice reference in exact fractions, for small games (tests only).

Written without the solver's code: rolls are enumerated as ordered tuples of faces and
grouped here, hands are ranked by a separate function, and the seat game is solved by
plain recursion over the seats with the all-tie replay solved as a linear equation.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations, product


def hand_key(dice, three=True, straights=False):
    """(category, points) with the hand_sum tie-break, written from RULES.md §10."""
    c = Counter(dice)
    shape = sorted(c.values(), reverse=True)
    by = sorted(c, key=lambda f: (-c[f], -f))
    if shape == [5]:
        return (7, 5 * by[0])
    if shape == [4, 1]:
        return (6, 4 * by[0])
    if shape == [3, 2]:
        return (5, sum(dice))
    if shape == [3, 1, 1]:
        return (3, 3 * by[0]) if three else (1, 2 * by[0])
    if shape == [2, 2, 1]:
        return (2, 2 * by[0] + 2 * by[1])
    if shape == [2, 1, 1, 1]:
        return (1, 2 * by[0])
    if straights and sorted(dice) in ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]):
        return (4, sum(dice))
    return (0, sum(dice))


@cache
def throw_distribution(n):
    """{sorted faces: Fraction} of a throw of n dice, by enumerating the 6**n ordered throws."""
    out = Counter()
    for t in product(range(1, 7), repeat=n):
        out[tuple(sorted(t))] += 1
    return {k: Fraction(v, 6**n) for k, v in out.items()}


def best_turn(u, rolls, lock=True):
    """(value, E) of the turn maximising E[u(final dice)], exactly: ``E(g)`` is the
    expectation of another function of the final dice under the same (optimal) play.

    The value of keeping K before throw k depends on K alone, so it is memoised per K.
    Ties: stop when stopping is as good, else the first best re-roll (fewest dice first)."""
    C, choice = {}, {}

    def reroll_options(free):
        seen = []
        for r in range(1, len(free) + 1):
            for pos in combinations(range(len(free)), r):
                out = tuple(sorted(free[i] for i in pos))
                if out not in seen:
                    seen.append(out)
        return seen

    def minus(a, b):
        rest = list(a)
        for f in b:
            rest.remove(f)
        return tuple(rest)

    def nxt(keep, o):
        return (keep, o) if lock else ((), tuple(sorted(keep + o)))

    def cont(k, keep):  # throw k of the dice not in keep, then play on
        if (k, keep) not in C:
            C[(k, keep)] = sum(p * W(k, *nxt(keep, o)) for o, p in throw_distribution(5 - len(keep)).items())
        return C[(k, keep)]

    def W(k, locked, free):
        dice = tuple(sorted(locked + free))
        best, pick = Fraction(u(dice)), None
        if k < rolls:
            for out in reroll_options(free):
                keep = tuple(sorted(locked + minus(free, out))) if lock else minus(dice, out)
                v = cont(k + 1, keep)
                if v > best:
                    best, pick = v, keep
        choice[(k, locked, free)] = pick
        return best

    first = throw_distribution(5)
    value = sum(p * W(1, (), d) for d, p in first.items())

    def expect(g):
        memo = {}

        def G(k, locked, free):
            key = (k, locked, free)
            if key not in memo:
                keep = choice[key] if k < rolls else None
                if keep is None:
                    memo[key] = Fraction(g(tuple(sorted(locked + free))))
                else:
                    memo[key] = sum(p * G(k + 1, *nxt(keep, o)) for o, p in throw_distribution(5 - len(keep)).items())
            return memo[key]

        return sum(p * G(1, (), d) for d, p in first.items())

    return value, expect


def two_player_values(rolls, lock=True):
    """[P(seat 1 wins), P(seat 2 wins)] of the two-player game, exactly (hand_sum, no straights).

    The all-tie replay is the same game: with x = V[0], the second player's utility at a
    tie is 1 - x, and seat 1's value is a function of x; the fixed point is found by
    iterating exactly until the second player's choices repeat, then solving the linear
    equation for x with those choices."""
    keys = sorted({hand_key(d) for d in throw_distribution(5)})
    x = Fraction(1, 2)
    for _ in range(20):
        # the second player's best response to each first hand b, given a tie worth 1 - x
        responses = {}
        for b in keys:

            def u2(d, b=b):
                h = hand_key(d)
                return 1 if h > b else (1 - x if h == b else 0)

            _, expect = best_turn(u2, rolls, lock)
            responses[b] = (expect(lambda d, b=b: hand_key(d) < b), expect(lambda d, b=b: hand_key(d) == b))

        # seat 1 maximises lo + eq * x over its final hand b; then x solves x = A + B x
        def u1(d):
            lo, eq = responses[hand_key(d)]
            return lo + eq * x

        _, expect1 = best_turn(u1, rolls, lock)
        A = expect1(lambda d: responses[hand_key(d)][0])
        B = expect1(lambda d: responses[hand_key(d)][1])
        new = A / (1 - B)
        if new == x:
            break
        x = new
    return [x, 1 - x]
