"""One game as the environments play it: the dice thrown by the environment's generator,
everything the rules decide played at once, and the game stopped at each decision a
player makes (a roll that leaves a choice).

The course of the game is that of every other game here: a turn by
:class:`thousand.engine.TurnRules`, the game by :func:`thousand.engine.next_turn`
(equal turns, instant wins, overtaking and the rest as docs/rules.md has them).
"""

from __future__ import annotations

import random

import numpy as np

from thousand.analysis.bots import BotState
from thousand.analysis.observation import Encoding
from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.engine.turn import (
    MAX_TURNS,
    Action,
    GameStep,
    TurnEnd,
    TurnRules,
    TurnState,
    finish_turn,
    next_turn,
)
from thousand.rules.ruleset import Ruleset, load_ruleset

__all__ = ["Match", "ruleset_of"]


def ruleset_of(rules, overrides=()) -> Ruleset:
    """A dice game's ruleset from a preset name, a TOML path or a Ruleset (poker dice has
    no environment here: its decisions are rerolls, not set-asides)."""
    rs = load_ruleset(rules, tuple(overrides))
    if not isinstance(rs, Ruleset):
        raise StateError(_("{0}: the environments play the dice games with set-asides, not poker dice").format(rs.name))
    return rs


class Match:
    """A game of ``players`` seats of ``rs`` from the start, waiting at its first decision
    (:meth:`advance`). ``winners`` is set when it is over (``truncated`` when it lasted
    :data:`thousand.engine.MAX_TURNS` turns)."""

    def __init__(self, rs: Ruleset, players: int, rng: random.Random):
        self.rs, self.players, self.rng = rs, players, rng
        self.engine = TurnRules(rs)
        self.encoding = Encoding(rs, players)
        self.step = GameStep(None, (self.engine.moves.initial(),) * players)
        self.turn: TurnState | None = None  # the mover's turn, its roll showing at a decision
        self.winners: tuple[int, ...] | None = None
        self.final: tuple = ()  # every player's state when the game was won
        self.truncated = False
        self.turns = 0
        self.advance()

    @property
    def over(self) -> bool:
        return self.winners is not None or self.truncated

    @property
    def mover(self) -> int:
        return self.step.mover

    @property
    def players_now(self) -> tuple:
        """Every player's state (in seat order), the game's last once it is won."""
        return self.final if self.winners is not None else self.step.players

    @property
    def legal(self) -> tuple[Action, ...]:
        return self.engine.legal(self.turn)

    def _throw(self, n: int) -> list[int]:
        return [self.rng.randint(1, self.rs.faces) for _ in range(n)]

    def _end_turn(self, end: TurnEnd) -> None:
        before = self.step
        self.step = next_turn(self.engine.moves, before, end)
        self.turn = None
        self.turns += 1
        if self.step.winners is not None:
            self.winners = tuple(self.step.winners)
            # the game's last state stays observable: every player as the last turn left them
            done = tuple(s for s, _f in before.finished)
            after = finish_turn(self.engine.moves, before.players, before.mover, end, finished=done)
            players = list(after.players)
            if after.won:
                players[before.mover] = before.players[before.mover]._replace(score=after.final_total)
            self.final = tuple(players)
        elif self.turns >= MAX_TURNS:
            self.truncated = True

    def advance(self) -> None:
        """Throw and play what the rules decide until a decision or the end of the game."""
        while not self.over:
            if self.turn is None:
                self.turn = self.engine.start(self.step.players[self.mover])
            s = self.turn
            if s.roll is None:
                r = self.engine.after_roll(s, self._throw(s.dice))
                if isinstance(r, TurnEnd):
                    self._end_turn(r)
                    continue
                self.turn = s = r
            legal = self.engine.legal(s)
            if len(legal) > 1:
                return
            self._apply(legal[0])

    def _apply(self, a: Action) -> None:
        nxt = self.engine.apply(self.turn, a)
        if isinstance(nxt, TurnEnd):
            self._end_turn(nxt)
        else:
            self.turn = nxt

    def act(self, a: Action) -> None:
        """The mover plays the legal action ``a``; the game goes on to the next decision."""
        self._apply(a)
        self.advance()

    def bot_state(self) -> BotState:
        """The decision waiting, as a bot sees it (:class:`thousand.analysis.bots.BotState`)."""
        N, k = self.players, self.mover
        opp = [self.step.players[(k + j) % N] for j in range(1, N)]
        last = bool(self.step.finished)
        return BotState.at(
            self.engine,
            self.turn,
            opp[0],
            tuple(opp[1:]),
            k if self.rs.equal_turns else None,
            self.step.to_beat if last else None,
            self.step.tied if last else 0,
        )

    def observe(self, viewer: int) -> np.ndarray:
        """Seat ``viewer``'s observation (:class:`thousand.analysis.observation.Encoding`)."""
        s = self.turn
        last = bool(self.step.finished)
        return self.encoding.observe(
            self.players_now,
            viewer,
            self.mover,
            s.total if s is not None else 0,
            s.roll if s is not None else None,
            bool(s is not None and s.roll is not None and self.engine.compulsory(s)),
            self.mover if self.rs.equal_turns else None,
            self.step.to_beat if last else None,
        )

    def mask(self) -> np.ndarray:
        """The legal actions of the decision waiting (none once the game is over)."""
        if self.over:
            return np.zeros(self.encoding.n_actions, dtype=np.int8)
        return self.encoding.mask(self.legal)

    def rewards(self) -> list[float]:
        """+1 to the winner once the game is over (a top shared by k: 1/k each), else 0."""
        out = [0.0] * self.players
        for w in self.winners or ():
            out[w] = 1.0 / len(self.winners)
        return out
