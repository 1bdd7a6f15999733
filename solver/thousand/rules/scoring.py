"""Scoring one roll: scoring groups, best composition, legal set-asides.

A roll is a multiset of faces, written as a count vector ``c`` (``c[f-1]`` dice
show face ``f``). Every rule of the scoring table becomes a *group*: a count
vector ``g`` and its points. The best composition of ``c`` solves

    best(c) = max( (0, 0),  max_{g <= c} (points(g), |g|) + best(c - g) )

in lexicographic order (most points, then most dice), as docs/rules.md section 1 asks.
This module is the readable reference; the kernels (compiled and pure) take the
groups from :func:`scoring_groups` and produce roll classes from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, combinations_with_replacement

import numpy as np

from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.base.untrusted import cut

from .ruleset import Ruleset

__all__ = ["RollScorer", "ScoringGroups", "parse_roll", "scoring_groups"]


@dataclass(frozen=True)
class ScoringGroups:
    """The groups of a ruleset as arrays the kernels read.

    ``counts``: int64 (G, faces), dice of each face a group uses; ``points``:
    int64 (G,) in points; ``instant``: int64 (I, faces), the minimal counts of
    each instant-win pattern.
    """

    faces: int
    counts: np.ndarray
    points: np.ndarray
    instant: np.ndarray


def scoring_groups(rs: Ruleset) -> ScoringGroups:
    f = rs.faces
    rows: dict[tuple[int, ...], int] = {}

    def add(vec: list[int], pts: int) -> None:
        key = tuple(vec)
        rows[key] = max(rows.get(key, 0), pts)  # two rules for one group: the better counts

    sc = rs.scoring
    for face, pts in sc.singles:
        v = [0] * f
        v[face - 1] = 1
        add(v, pts)
    for count, face, pts in sc.kinds:
        v = [0] * f
        v[face - 1] = count
        add(v, pts)
    for fs, pts in sc.straights:
        v = [0] * f
        for face in fs:
            v[face - 1] = 1
        add(v, pts)
    for size, count, distinct, pts in sc.patterns:
        choose = combinations if distinct else combinations_with_replacement
        for faces in choose(range(f), count):
            v = [0] * f
            for face in faces:
                v[face] += size
            add(v, pts)
    keys = sorted(rows)
    counts = np.array(keys, dtype=np.int64).reshape(len(keys), f)
    points = np.array([rows[k] for k in keys], dtype=np.int64)
    inst = np.zeros((len(sc.instant_win), f), dtype=np.int64)
    for i, (face, count) in enumerate(sc.instant_win):
        inst[i, face - 1] = count
    return ScoringGroups(f, counts, points, inst)


def parse_roll(text: str, rs: Ruleset) -> tuple[int, ...]:
    """Faces from ``"1,5,5,2,3"`` (or ``"15523"``), checked against the ruleset."""
    parts = re.split(r"\s*,\s*|\s+", text.strip())
    if len(parts) > 1 and "" in parts:  # "1,,5": a face left out, not a die less
        raise StateError(_("roll {0!r}: an empty face between two commas").format(cut(text)))
    parts = [p for p in parts if p]
    if len(parts) == 1 and len(parts[0]) > 1 and parts[0].isdigit() and rs.faces < 10:
        parts = list(parts[0])
    try:
        faces = tuple(int(p) for p in parts)
    except ValueError:
        raise StateError(_("roll {0!r}: faces must be whole numbers").format(cut(text))) from None
    if not faces:
        raise StateError(_("roll: no dice given"))
    if len(faces) > rs.dice:
        raise StateError(_("roll {0!r} has {1} dice, the game has {2}").format(cut(text), len(faces), rs.dice))
    for x in faces:
        if not 1 <= x <= rs.faces:
            raise StateError(_("roll {0!r}: face {1} is not between 1 and {2}").format(cut(text), x, rs.faces))
    return faces


class RollScorer:
    """Best compositions and legal set-asides of single rolls (reference code)."""

    def __init__(self, rs: Ruleset):
        self.rs = rs
        g = scoring_groups(rs)
        self._groups = [(tuple(int(x) for x in row), int(p)) for row, p in zip(g.counts, g.points)]
        self._instant = [tuple(int(x) for x in row) for row in g.instant]
        self.best = lru_cache(maxsize=None)(self._best)
        self.full = lru_cache(maxsize=None)(self._full)

    def counts(self, roll: tuple[int, ...]) -> tuple[int, ...]:
        c = [0] * self.rs.faces
        for x in roll:
            c[x - 1] += 1
        return tuple(c)

    def _best(self, c: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
        """(points, dice used, dice-used count vector) of the best composition of ``c``."""
        best = (0, 0, (0,) * len(c))
        for g, pts in self._groups:
            if all(a >= b for a, b in zip(c, g)):
                p, u, used = self.best(tuple(a - b for a, b in zip(c, g)))
                cand = (p + pts, u + sum(g), tuple(a + b for a, b in zip(used, g)))
                if cand[:2] > best[:2]:
                    best = cand
        return best

    def _full(self, c: tuple[int, ...]) -> int | None:
        """The most points of a composition of ``c`` that uses every die (None: none does)."""
        if not any(c):
            return 0
        best = None
        for g, pts in self._groups:
            if all(a >= b for a, b in zip(c, g)):
                r = self.full(tuple(a - b for a, b in zip(c, g)))
                if r is not None and (best is None or r + pts > best):
                    best = r + pts
        return best

    def is_instant_win(self, roll: tuple[int, ...]) -> bool:
        c = self.counts(roll)
        return any(all(a >= b for a, b in zip(c, pat)) for pat in self._instant)

    def set_asides(self, roll: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        """Legal set-asides of a roll: (points, dice set aside, sorted), best first.

        ``keep = all``: only the best composition. ``keep = any``: every non-empty
        sub-multiset all of whose dice score in its own best composition; with
        ``compose = any``, every one that some composition uses all of, scored by the best
        such composition (1,1,1,1,2,2 as three pairs, 1500 and hot dice, besides four 1s).
        """
        c = self.counts(roll)
        if self.rs.scoring.nothing and len(roll) == self.rs.dice and not self.best(c)[1]:
            # a roll of all the dice with no scoring die: the "nothing" pattern uses them all
            return [(self.rs.scoring.nothing, tuple(sorted(roll)))]
        if self.rs.keep == "all":
            p, u, used = self.best(c)
            return [(p, _faces(used))] if u else []
        out = []
        for sub in _sub_multisets(c):
            n = sum(sub)
            if n == 0:
                continue
            if self.rs.compose == "any":  # the player may score the dice by any composition of them all
                p = self.full(sub)
                if p is not None:
                    out.append((p, _faces(sub)))
                continue
            p, u, _ = self.best(sub)
            if u == n:
                out.append((p, _faces(sub)))
        out.sort(key=lambda o: (-o[0], len(o[1]), o[1]))
        return out


def _faces(c: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(f + 1 for f, k in enumerate(c) for _ in range(k))


def _sub_multisets(c: tuple[int, ...]):
    if not c:
        yield ()
        return
    for rest in _sub_multisets(c[1:]):
        for k in range(c[0] + 1):
            yield (k,) + rest
