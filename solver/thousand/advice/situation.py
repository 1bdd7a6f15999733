"""A decision to advise, as every front end states it: the :class:`Situation`."""

from __future__ import annotations

from dataclasses import dataclass

from thousand.base.choices import SEATS
from thousand.base.i18n import _
from thousand.engine.player import PlayerState
from thousand.rules.ruleset import Ruleset

__all__ = ["Situation"]


@dataclass(frozen=True)
class Situation:
    """The player to move and everything the advice depends on.

    ``me`` is the mover at the start of the turn, ``opponents`` the players still in the
    game in the order they move next (in a last turn of an ``equal_turns`` round: the
    players still to play their last turns after this one). ``seat`` is the mover's place
    in the round (0 the first) where the rules play equal turns. ``turn_total`` the points
    of this turn so far, then either ``dice`` about to be rolled or the ``roll`` thrown.
    A last turn has ``to_beat``, the top final total, held by ``tied`` players. ``names``
    (the mover's, then the opponents') only label the advice."""

    rs: Ruleset
    me: PlayerState
    opponents: tuple[PlayerState, ...] = ()
    seat: int | None = None
    turn_total: int = 0
    dice: int | None = None
    roll: tuple[int, ...] | None = None
    to_beat: int | None = None
    tied: int = 1
    names: tuple[str, ...] = ()

    @property
    def players(self) -> int:
        """Players in the game from the mover's view: the mover and its opponents."""
        return 1 + len(self.opponents)

    @property
    def last_turn(self) -> bool:
        return self.to_beat is not None

    def name(self, k: int) -> str:
        """The name of player ``k`` (0 the mover, then the opponents in order)."""
        if k < len(self.names):
            return self.names[k]
        if k == 0:
            return _("you")
        return _("opponent {k}").format(k=k) if len(self.opponents) > 1 else _("opponent")

    def called(self, k: int) -> str:
        """Player ``k`` named in a sentence: their name, else "your opponent" / "opponent 2"."""
        if k < len(self.names) or k == 0 or len(self.opponents) > 1:
            return self.name(k)
        return _("your opponent")

    def label(self) -> str:
        """Who is where, in words: the mover first, then the others."""
        rs = self.rs
        if self.last_turn:
            head = _("{me}: {state}; last turn against a finished total of {total}").format(
                me=self.name(0), state=self.me.describe(rs), total=self.to_beat
            )
            rest = [
                _("still to play {k}: {opp}").format(k=k + 1, opp=o.describe(rs)) for k, o in enumerate(self.opponents)
            ]
            return "; ".join([head, *rest])
        me = _("{me}: {state}").format(me=self.name(0), state=self.me.describe(rs))
        if self.seat is not None and self.rs.equal_turns:
            me = _("{me} ({seat} seat): {state}").format(
                me=self.name(0), seat=_(SEATS[self.seat]), state=self.me.describe(rs)
            )
        return "; ".join(
            [me]
            + [
                _("{me}: {state}").format(me=self.name(k + 1), state=o.describe(rs))
                for k, o in enumerate(self.opponents)
            ]
        )
