"""One turn from a game state: how it can end.

:class:`TurnEnds` lists, for a player state ``x`` and every turn total ``t``
(in units), where banking leads, where a mid-turn event ends the turn, and
where a bust leads. Game-level solvers turn these next states into values and
hand them to :func:`thousand.kernel.turn_dp`; the turn DP itself never changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .player import Moves, PlayerState

__all__ = ["TurnEnds"]


@dataclass
class TurnEnds:
    """Where a turn from ``x`` can end, per total ``t`` = 0..T units (T+1: beyond)."""

    x: PlayerState
    T: int
    stop_ok: np.ndarray  # uint8 (T+1,)
    stop_next: list  # PlayerState | WIN | None per t
    forced_ok: np.ndarray  # uint8 (T+1,)
    forced_next: list  # PlayerState | WIN | None per t
    forced_event: list  # "dump" / "overshoot" / None per t
    bust_next: PlayerState

    @classmethod
    def of(cls, moves: Moves, x: PlayerState, T: int | None = None) -> TurnEnds:
        u = moves.rs.unit
        if T is None:
            T = moves.saturation(x) // u
        stop_ok = np.zeros(T + 1, np.uint8)
        forced_ok = np.zeros(T + 1, np.uint8)
        stop_next: list = [None] * (T + 1)
        forced_next: list = [None] * (T + 1)
        events: list = [None] * (T + 1)
        for t in range(1, T + 1):
            pts = t * u
            ev = moves.mid_turn(x, pts)
            if ev:
                forced_ok[t] = 1
                events[t] = ev
                forced_next[t] = moves.mid_turn_end(x, pts, ev)
            elif moves.can_bank(x, pts):
                stop_ok[t] = 1
                stop_next[t] = moves.bank(x, pts)
        return cls(x, T, stop_ok, stop_next, forced_ok, forced_next, events, moves.zero(x))

    def others_after(self, moves: Moves, t: int) -> tuple[int, int, bool]:
        """What the end at total ``t`` does to every other player, as the arguments
        ``(before, after, climbed)`` of :meth:`thousand.engine.player.Moves.affect_opponent`: the
        mover's score before and the score it reached (an overshoot reaches nothing), and
        whether it climbed onto the barrel."""
        x = self.x
        y = self.stop_next[t] if self.stop_ok[t] else self.forced_next[t]
        if y is None or self.forced_event[t] == "overshoot":
            return x.score, x.score, False
        return x.score, moves.raised_to(x, t * moves.rs.unit), moves.climbed(x, y)
