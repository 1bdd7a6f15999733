"""Blunders: the decisions a bot took, each valued by a solved table (an
:class:`thousand.analysis.oracle.Oracle`): what it gave up against the best action, totals per
game, and the worst decisions kept for the report."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from thousand.engine.turn import Action

from .bots import BotState

__all__ = ["Blunders"]


@dataclass
class Blunders:
    """Decisions the bot took, valued by the table: per game totals and the worst ones
    (``keep`` distinct decisions: one met in many games is counted each time, listed once)."""

    oracle: object  # thousand.analysis.oracle.Oracle
    keep: int = 10
    decisions: int = 0
    total: float = 0.0
    mistakes: int = 0
    per_game: list = field(default_factory=list)
    worst: list = field(default_factory=list)  # heap of (loss, seq, state, action, best, value)
    _seq: int = 0
    _game: float = 0.0
    _listed: set = field(default_factory=set)  # the decisions in ``worst``: each listed once

    def record(self, state: BotState, action: Action) -> float:
        lost, value, best = self.oracle.loss(state, action)
        self.decisions += 1
        self.total += lost
        self._game += lost
        if lost > 1e-12:
            self.mistakes += 1
        self._seq += 1
        item = (lost, -self._seq, state, action, best, value)
        key = (state.key(), action)
        if self.keep <= 0 or key in self._listed:
            # the same decision met again (a bot in a Monte Carlo game meets it often)
            pass
        elif len(self.worst) < self.keep:
            heapq.heappush(self.worst, item)
            self._listed.add(key)
        elif lost > self.worst[0][0]:
            out = heapq.heapreplace(self.worst, item)
            self._listed.discard((out[2].key(), out[3]))
            self._listed.add(key)
        return lost

    def end_game(self) -> None:
        self.per_game.append(self._game)
        self._game = 0.0

    def worst_sorted(self) -> list:
        return sorted(self.worst, key=lambda it: (-it[0], -it[1]))
