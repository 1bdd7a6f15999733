"""The game states of one player, enumerated sparsely, and the turn ends of each.

The state space is the closure, under every way a turn can end (and, for
the duel, under every way an opponent's move can change a player), of the
seeds: every playable score with every combination of the counters that the
ruleset keeps at that score. Counters that do not matter somewhere are 0
there (see :class:`thousand.engine.player.PlayerState`), so the space stays small.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from thousand.rules.ruleset import Ruleset

from .ends import TurnEnds
from .player import WIN, Moves, PlayerState

__all__ = [
    "FIELDS",
    "WIN_INDEX",
    "OpponentMaps",
    "StateSpace",
    "TooManyStates",
    "build_state_space",
    "closure",
    "decode",
    "opponent_maps",
    "seeds",
]

FIELDS = PlayerState._fields
WIN_INDEX = -1


def _order_key(x: PlayerState):
    # high scores first, and at one score the counters nearest to a penalty
    # first: a zero turn moves towards them, so Gauss-Seidel sees fresh values
    return (
        -x.score,
        -x.bolts,
        -x.barrel_tries,
        -x.pit_tries,
        -x.overshoots,
        -x.falls,
        x.opened,
        -x.pit_entry,
        -x.barrel_entry,
    )


@dataclass
class StateSpace:
    """Player states in solving order, with their turn ends as state indices.

    For state ``i``: ``T[i]`` units; ``stop_ok[i]``/``forced_ok[i]`` uint8
    (T+1,); ``stop_idx[i]``/``forced_idx[i]`` int64 (T+1,) next state index
    (``WIN_INDEX`` for a win, -2 where none); ``bust_idx[i]``.
    """

    rs: Ruleset
    states: list[PlayerState]
    index: dict[PlayerState, int]
    T: np.ndarray
    stop_ok: list[np.ndarray]
    stop_idx: list[np.ndarray]
    forced_ok: list[np.ndarray]
    forced_idx: list[np.ndarray]
    bust_idx: np.ndarray
    ends: list[TurnEnds]

    def __len__(self) -> int:
        return len(self.states)

    def encode(self) -> np.ndarray:
        """int32 (n, 9): the fields of every state, in :data:`FIELDS` order."""
        return np.array([tuple(int(v) for v in x) for x in self.states], dtype=np.int32).reshape(-1, len(FIELDS))

    def lookup(self, x: PlayerState) -> int:
        return self.index[x]


@dataclass
class OpponentMaps:
    """What another player's move can do to each state, as state indices: ``pushed[y]``,
    ``y`` knocked off the barrel (itself if not on it); ``overtaken[y]``, ``y`` overtaken
    (docs/rules.md section 3, steps 4-5); ``score`` and ``on_barrel`` to decide which
    applies. The opponent after an end ``(before, after, climbed)`` of the mover is
    ``pushed`` where ``climbed and on_barrel``, then ``overtaken`` of that where
    ``before < score < after`` -- as :meth:`thousand.engine.player.Moves.affect_opponent`."""

    score: np.ndarray
    on_barrel: np.ndarray
    pushed: np.ndarray
    overtaken: np.ndarray

    def after(self, before: int, after: np.ndarray, climbed: np.ndarray) -> np.ndarray:
        """(B, m): every state after each of B ends of a mover at score ``before``."""
        y = np.arange(len(self.score))[None, :]
        y = np.where(np.asarray(climbed, bool)[:, None] & self.on_barrel[y], self.pushed[y], y)
        passed = (before < self.score[y]) & (self.score[y] < np.asarray(after)[:, None])
        return np.where(passed, self.overtaken[y], y)


def opponent_maps(space: StateSpace) -> OpponentMaps:
    """:class:`OpponentMaps` of a state space closed under opponents' moves
    (``build_state_space(rs, opponents=True)``)."""
    mv, idx = Moves(space.rs), space.index
    st = space.states
    return OpponentMaps(
        score=np.array([x.score for x in st], dtype=np.int64),
        on_barrel=np.array([mv.on_barrel(x) for x in st], dtype=bool),
        pushed=np.array([idx[mv.affect_opponent(x, x.score, x.score, True)] for x in st], dtype=np.int64),
        overtaken=np.array([idx[mv.affect_opponent(x, x.score - 1, x.score + 1, False)] for x in st], dtype=np.int64),
    )


def decode(row) -> PlayerState:
    """The :class:`PlayerState` of one row of :meth:`StateSpace.encode`."""
    return PlayerState(int(row[0]), bool(row[1]), *(int(v) for v in row[2:]))


def seeds(moves: Moves) -> list[PlayerState]:
    rs = moves.rs
    u = rs.unit
    top = rs.barrel.threshold if rs.barrel.kind == "points" else rs.goal - u
    out = []
    bolts = range(max(rs.bolts.limit, 1))
    falls = range(max(rs.barrel.max_falls, 1))
    overs = range(max(rs.barrel.overshoots, 1)) if rs.barrel.kind == "exact" else range(1)
    for s in range(rs.floor, top + 1, u):
        if s in rs.dump:
            continue
        opened = (True, False) if (s <= 0 and rs.open_min) else (True,)
        for o, b, f, v in product(opened, bolts, falls, overs):
            out.append(moves.normalise(PlayerState(s, o, b, 0, 0, 0, 0, f, v)))
    return out


class TooManyStates(Exception):
    """The closure passed the ``limit`` it was given: at least :attr:`count` states."""

    def __init__(self, count: int):
        super().__init__(count)
        self.count = count


def closure(rs: Ruleset, opponents: bool = False, limit: int | None = None) -> dict[PlayerState, TurnEnds]:
    """Every state reachable from :func:`seeds` (with ``opponents``, also by another
    player's move), with its turn ends. Raises :class:`TooManyStates` as soon as more
    than ``limit`` states are found, so that a size check costs at most ``limit``
    states' work."""
    moves = Moves(rs)
    todo = list(dict.fromkeys(seeds(moves)))
    seen = set(todo)
    if limit is not None and len(seen) > limit:
        raise TooManyStates(len(seen))
    ends: dict[PlayerState, TurnEnds] = {}
    while todo:
        x = todo.pop()
        e = TurnEnds.of(moves, x)
        ends[x] = e
        nxt = [e.bust_next]
        for t in range(1, e.T + 1):
            nxt.extend(y for y in (e.stop_next[t], e.forced_next[t]) if y is not None and y != WIN)
        if opponents:
            # what another player's move can do to x: overtake it, push it off the barrel
            nxt.append(moves.affect_opponent(x, x.score - 1, x.score + 1, False))
            nxt.append(moves.affect_opponent(x, x.score, x.score, True))
        for y in nxt:
            if y not in seen:
                seen.add(y)
                todo.append(y)
        if limit is not None and len(seen) > limit:
            raise TooManyStates(len(seen))
    return ends


def build_state_space(
    rs: Ruleset, opponents: bool = False, ends: dict[PlayerState, TurnEnds] | None = None
) -> StateSpace:
    """Enumerate the states (:func:`closure` of :func:`seeds`, or the ``ends`` one
    call of it returned) and their turn ends."""
    if ends is None:
        ends = closure(rs, opponents)
    seen = ends.keys()
    states = sorted(seen, key=_order_key)
    index = {x: i for i, x in enumerate(states)}

    def idx(y) -> int:
        return WIN_INDEX if y == WIN else (-2 if y is None else index[y])

    lst = [ends[x] for x in states]
    return StateSpace(
        rs,
        states,
        index,
        T=np.array([e.T for e in lst], dtype=np.int64),
        stop_ok=[e.stop_ok for e in lst],
        stop_idx=[np.array([idx(y) for y in e.stop_next], dtype=np.int64) for e in lst],
        forced_ok=[e.forced_ok for e in lst],
        forced_idx=[np.array([idx(y) for y in e.forced_next], dtype=np.int64) for e in lst],
        bust_idx=np.array([index[e.bust_next] for e in lst], dtype=np.int64),
        ends=lst,
    )
