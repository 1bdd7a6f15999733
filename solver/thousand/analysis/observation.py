"""What a learning bot sees and answers: one fixed-size observation vector and one
numbered action space per ruleset and number of players (docs/bots.md, "Bots from
reinforcement learning").

The environments of :mod:`thousand.env` (PettingZoo, Gymnasium) observe and act through
:class:`Encoding`, and ``thousand evaluate --bot policy:MODULE:ATTR`` asks a policy trained
there in exactly the same terms (:class:`thousand.analysis.bots.PolicyBot`), so a policy
evaluates as it was trained.

**Actions.** A decision follows a roll that scores: set some scoring dice aside, then roll
on or stop. Every multiset of faces the dice can show (1 to ``dice`` dice, sorted) is a
set-aside; action ``2 k`` sets aside set-aside ``k`` and rolls on, ``2 k + 1`` sets it
aside and stops. The mask marks the actions the rules allow after this roll (where the
rules decide what follows a set-aside -- hot dice that must be rolled, a confirmed bank, a
dump -- only the action with that outcome is marked).

**Observation** (float32, from the viewer's seat; :attr:`Encoding.names` names each entry):
every player's state (the viewer first, then the others in the order they move after it;
its fields as :class:`thousand.engine.PlayerState` has them: score, opened, bolts,
pit_tries, pit_entry, barrel_tries, barrel_entry, falls, overshoots), then who is to move
(0 the viewer, 1 the next, ...), the turn total before this roll, the number of dice
thrown, how many of them show each face, whether they are hot dice (a compulsory roll),
the mover's seat in the round under equal turns (-1 otherwise) and, in a last turn, the
total to beat (-1 otherwise).
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from thousand.base.errors import BotError
from thousand.base.i18n import _
from thousand.engine.player import PlayerState
from thousand.engine.turn import TOTAL_CAP, Action
from thousand.rules.ruleset import Ruleset

__all__ = ["Encoding"]


class Encoding:
    """The observation vector and the numbered actions of ``rs`` for ``players`` seats."""

    def __init__(self, rs: Ruleset, players: int = 2):
        if players < 1:
            raise BotError(_("an environment needs 1 player or more, not {0}").format(players))
        self.rs, self.players = rs, players
        faces = range(1, rs.faces + 1)
        self.keeps = [k for n in range(1, rs.dice + 1) for k in combinations_with_replacement(faces, n)]
        self._keep = {k: i for i, k in enumerate(self.keeps)}
        self.n_actions = 2 * len(self.keeps)
        fields = PlayerState._fields
        self.names = (
            [f"player{j}.{f}" for j in range(players) for f in fields]
            + ["mover", "turn_total", "dice_thrown"]
            + [f"roll.{f}" for f in faces]
            + ["hot", "seat", "to_beat"]
        )
        self.size = len(self.names)
        # every entry's range: a turn total (and so a score) beyond TOTAL_CAP goals is no game's
        cap = float(TOTAL_CAP * rs.goal + rs.goal)
        self.low = np.full(self.size, -cap, dtype=np.float32)
        self.high = np.full(self.size, cap, dtype=np.float32)

    # -- actions

    def index(self, a: Action) -> int:
        """The number of a legal action."""
        return 2 * self._keep[tuple(a.keep)] + (0 if a.roll else 1)

    def mask(self, legal: tuple[Action, ...]) -> np.ndarray:
        """1 at the number of every legal action (int8, as PettingZoo and Gymnasium mask)."""
        m = np.zeros(self.n_actions, dtype=np.int8)
        m[[self.index(a) for a in legal]] = 1
        return m

    def action(self, k: Any, legal: tuple[Action, ...]) -> Action | None:
        """The legal action numbered ``k``, or None where ``k`` is no legal action's number."""
        try:
            k = int(k)
        except (TypeError, ValueError, OverflowError):
            return None
        return next((a for a in legal if self.index(a) == k), None)

    def describe(self, k: int) -> str:
        """An action number in words: "keep 1,5, roll on"."""
        keep = self.keeps[k // 2]
        return f"keep {','.join(map(str, keep))}, " + ("stop" if k % 2 else "roll on")

    # -- observations

    def observe(
        self,
        players,
        viewer: int,
        mover: int,
        total: int = 0,
        roll: tuple[int, ...] | None = None,
        hot: bool = False,
        seat: int | None = None,
        to_beat: int | None = None,
    ) -> np.ndarray:
        """The observation of seat ``viewer`` with every player's state ``players`` (in seat
        order), seat ``mover`` to move, its turn at ``total`` with ``roll`` showing."""
        N = self.players
        out = np.zeros(self.size, dtype=np.float32)
        k = 0
        for j in range(N):
            x = players[(viewer + j) % N]
            out[k : k + len(x)] = [float(v) for v in x]
            k += len(x)
        out[k] = (mover - viewer) % N
        out[k + 1] = total
        if roll is not None:
            out[k + 2] = len(roll)
            for f in roll:
                out[k + 2 + f] += 1
        k += 3 + self.rs.faces
        out[k : k + 3] = [float(hot), -1.0 if seat is None else seat, -1.0 if to_beat is None else to_beat]
        return out

    def of_state(self, state) -> tuple[np.ndarray, np.ndarray]:
        """(observation, mask) of a decision (a :class:`thousand.analysis.bots.BotState`),
        seen by its mover."""
        players = (state.me, *state.opponents)
        obs = self.observe(players, 0, 0, state.turn_total, state.roll, state.hot, state.seat, state.to_beat)
        return obs, self.mask(state.legal)
