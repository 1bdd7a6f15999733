"""A player's game state and what a turn does to it (docs/rules.md sections 2-6).

A :class:`PlayerState` holds the score and only the counters that matter where
they matter: ``opened`` only at scores <= 0 (a positive score has opened),
pit attempts and the entry score only inside a pit with an attempt limit,
barrel attempts and entry only on a points barrel, the bolt, fall and
overshoot counts only when the ruleset has them. Every other field is 0, so
equal situations are equal states.

:class:`Moves` applies the rules: whether a turn total may be banked, what a
bank, a zero turn, a mid-turn dump or an overshoot makes of the mover, and
what the mover's score change does to an opponent (overtaking, push-off).
All scores are in points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.rules.ruleset import Ruleset

__all__ = ["WIN", "Moves", "PlayerState"]


class PlayerState(NamedTuple):
    score: int
    opened: bool = True
    bolts: int = 0
    pit_tries: int = 0
    pit_entry: int = 0
    barrel_tries: int = 0
    barrel_entry: int = 0
    falls: int = 0
    overshoots: int = 0

    def describe(self, rs: Ruleset) -> str:
        parts = [_("score {score}").format(score=self.score)]
        if not self.opened:
            parts.append(_("unopened"))
        if rs.bolts.limit:
            parts.append(_("bolts {n}").format(n=self.bolts))
        pit = rs.pit_of(self.score)
        if pit:
            parts.append(_("in the pit from {low} to {exit}").format(low=pit.low, exit=pit.exit))
            if rs.pit_attempts:
                parts.append(_("pit tries {n}, entry {entry}").format(n=self.pit_tries, entry=self.pit_entry))
        if rs.on_barrel(self.score):
            parts.append(_("on the barrel"))
            if rs.barrel.attempts:
                parts.append(_("barrel tries {n}").format(n=self.barrel_tries))
        if rs.barrel.max_falls:
            parts.append(_("falls {n}").format(n=self.falls))
        if rs.barrel.kind == "exact":
            parts.append(_("overshoots {n}").format(n=self.overshoots))
        return ", ".join(parts)


WIN = "win"


@dataclass(frozen=True)
class Moves:
    """The rules of one ruleset as functions on :class:`PlayerState`."""

    rs: Ruleset

    # ------------------------------------------------------------ states

    def initial(self) -> PlayerState:
        return PlayerState(0, opened=self.rs.open_min == 0)

    def normalise(self, x: PlayerState, before: int | None = None) -> PlayerState:
        """Clear the counters that do not matter at ``x.score``; start pit and barrel
        bookkeeping when the score has just moved into them from ``before``."""
        rs = self.rs
        s = x.score
        opened = x.opened or s > 0 or rs.open_min == 0
        pit = rs.pit_of(s)
        pit_tries, pit_entry = 0, 0
        if pit and rs.pit_attempts:
            if before is not None and rs.pit_of(before) != pit:
                pit_entry = before
            else:
                pit_tries, pit_entry = x.pit_tries, x.pit_entry
            # a roll-back goes to min(entry, low - unit): every entry from above is one situation
            pit_entry = min(pit_entry, pit.low - rs.unit)
        b_tries, b_entry = 0, 0
        if rs.barrel.kind == "points" and s == rs.barrel.threshold:
            if before is not None and before != s:
                b_entry = before if rs.barrel.fall_to == "entry" else 0
            else:
                b_tries = x.barrel_tries if rs.barrel.attempts else 0
                b_entry = x.barrel_entry if rs.barrel.fall_to == "entry" else 0
        return PlayerState(
            s,
            opened,
            x.bolts if rs.bolts.limit else 0,
            pit_tries,
            pit_entry,
            b_tries,
            b_entry,
            x.falls if rs.barrel.max_falls else 0,
            x.overshoots if rs.barrel.kind == "exact" else 0,
        )

    def check(self, x: PlayerState) -> PlayerState:
        """``x`` if the rules can produce it (normalised), else a :class:`StateError`."""
        rs = self.rs
        u = rs.unit
        if x.score % u:
            raise StateError(_("score {s} is not a multiple of {u}").format(s=x.score, u=u))
        if not rs.floor <= x.score:
            raise StateError(_("score {s} is below the floor {floor}").format(s=x.score, floor=rs.floor))
        top = rs.barrel.threshold if rs.barrel.kind == "points" else rs.goal - u
        if x.score > top:
            raise StateError(_("score {s} is beyond the last playable score {top}").format(s=x.score, top=top))
        if x.score in rs.dump:
            raise StateError(_("score {s} is a dump score: it would already be 0").format(s=x.score))
        if not x.opened and x.score > 0:
            raise StateError(_("a player with a positive score has opened"))
        if not x.opened and rs.open_min == 0:
            raise StateError(_("this ruleset has no opening"))
        lim = {"bolts": rs.bolts.limit, "falls": rs.barrel.max_falls, "overshoots": rs.barrel.overshoots}
        for name, top_ in lim.items():
            v = getattr(x, name)
            if v and not top_:
                raise StateError(_("this ruleset has no {0}").format(name))
            if not 0 <= v < max(top_, 1):
                raise StateError(_("{0} must be 0 to {1}, got {2}").format(name, top_ - 1, v))
        pit = rs.pit_of(x.score)
        if x.pit_tries or x.pit_entry:
            if not (pit and rs.pit_attempts):
                raise StateError(_("pit attempts apply only inside a pit with an attempt limit"))
            if not 0 <= x.pit_tries < rs.pit_attempts:
                raise StateError(_("pit tries must be 0 to {0}").format(rs.pit_attempts - 1))
            if pit.low <= x.pit_entry < pit.exit:
                raise StateError(
                    _(
                        "the pit entry {0} lies inside the pit [{1}, {2}): it is the score before the player entered it"
                    ).format(x.pit_entry, pit.low, pit.exit)
                )
            # an entry from above rolls back to just below the pit: the same situation
            x = x._replace(pit_entry=min(x.pit_entry, pit.low - u))
        if x.barrel_tries or x.barrel_entry:
            if not (rs.barrel.kind == "points" and x.score == rs.barrel.threshold):
                raise StateError(_("barrel attempts apply only on a points barrel"))
            if x.barrel_tries and not 0 <= x.barrel_tries < rs.barrel.attempts:
                raise StateError(_("barrel tries must be 0 to {0}").format(rs.barrel.attempts - 1))
            if x.barrel_entry >= x.score:
                raise StateError(_("the barrel entry score must lie below the barrel"))
        y = self.normalise(x)
        if y != x._replace(opened=y.opened):
            raise StateError(_("counters that do not apply here: {0}").format(x))
        return y

    def check_pair(self, x: PlayerState, y: PlayerState) -> None:
        """A :class:`StateError` if two players cannot be in ``x`` and ``y`` at once: both
        on a barrel whose push-off knocks the other off it (who climbed last did)."""
        rs = self.rs
        if (
            rs.barrel.kind != "none"
            and rs.barrel.push_off != "none"
            and rs.on_barrel(x.score)
            and rs.on_barrel(y.score)
            and not rs.on_barrel(self.push_off(y, True).score)
        ):
            raise StateError(
                _("both players cannot be on the barrel: climbing it knocks the other off ({0})").format(
                    rs.barrel.push_off
                )
            )

    # ------------------------------------------------------------ statuses

    def in_pit(self, x: PlayerState) -> bool:
        return self.rs.pit_of(x.score) is not None

    def on_barrel(self, x: PlayerState) -> bool:
        return self.rs.on_barrel(x.score)

    def exempt(self, x: PlayerState) -> bool:
        """Whether a zero turn from ``x`` gives no bolt."""
        ex = self.rs.bolts.exempt
        return (
            ("unopened" in ex and not x.opened)
            or ("pit" in ex and self.in_pit(x))
            or ("barrel" in ex and self.on_barrel(x))
        )

    def can_bank(self, x: PlayerState, t: int) -> bool:
        """Whether a turn total ``t`` > 0 may be banked from ``x``."""
        rs = self.rs
        if t <= 0 or t < rs.min_bank:
            return False
        if not x.opened and t < rs.open_min:
            return False
        pit = rs.pit_of(x.score)
        if pit and x.score + t < pit.exit:
            return False
        b = rs.barrel
        if b.kind in ("points", "region") and rs.on_barrel(x.score) and x.score + t < rs.goal:
            return False
        if b.kind == "exact" and x.score + t > rs.goal:
            return False
        return not (b.kind == "exact" and rs.on_barrel(x.score) and x.score + t != rs.goal)

    def wins(self, x: PlayerState, t: int) -> bool:
        """Whether banking ``t`` from ``x`` reaches the goal."""
        rs = self.rs
        s1 = x.score + t
        k = rs.barrel.kind
        if k == "exact":
            return s1 == rs.goal
        if k == "points":
            return rs.on_barrel(x.score) and s1 >= rs.goal
        return s1 >= rs.goal

    def mid_turn(self, x: PlayerState, t: int) -> str | None:
        """The event that ends the turn the moment its total reaches ``t``:
        ``"dump"`` (dump mid-turn), ``"overshoot"`` (exact barrel) or None."""
        rs = self.rs
        if rs.barrel.kind == "exact" and x.score + t > rs.goal:
            return "overshoot"
        if rs.dump_mid_turn and (x.score + t) in rs.dump and t > 0:
            return "dump"
        return None

    def saturation(self, x: PlayerState) -> int:
        """A total (points) from which every larger total ends the turn alike."""
        rs = self.rs
        top = rs.goal
        if rs.barrel.kind == "points" and not rs.on_barrel(x.score):
            top = rs.barrel.threshold
        if rs.barrel.kind == "exact":
            top = rs.goal + rs.unit
        if rs.dump_mid_turn:  # a mid-turn samosval strikes at its own total only: the totals past it differ
            top = max([top, *(d + rs.unit for d in rs.dump if d > x.score)])
        # below min_bank a total cannot be banked at all, so saturation is never below it
        return max(top - x.score, rs.unit, rs.min_bank)

    # ------------------------------------------------------------ score changes

    def _set_score(self, x: PlayerState, s: int) -> PlayerState:
        """A score change from outside the mover's bank: floor, samosval, and
        pit/barrel bookkeeping (a penalty below the barrel leaves it without a fall)."""
        s = max(s, self.rs.floor)
        if s in self.rs.dump:
            s = 0
        return self.normalise(x._replace(score=s), before=x.score)

    def _fall(self, x: PlayerState) -> PlayerState:
        """A fall from the barrel (attempts or overshoots used up)."""
        b = self.rs.barrel
        falls = x.falls + 1
        if b.max_falls and falls >= b.max_falls:
            return self._set_score(x._replace(falls=0, barrel_tries=0, barrel_entry=0, overshoots=0), 0)
        if b.fall_to == "entry":
            s = x.barrel_entry
        elif b.fall_to == "open_min":
            s = self.rs.open_min
        else:
            s = x.score - b.fall_penalty
        return self._set_score(
            x._replace(falls=falls if b.max_falls else 0, barrel_tries=0, barrel_entry=0, overshoots=0), s
        )

    def bank(self, x: PlayerState, t: int) -> PlayerState | str:
        """The mover's state after banking ``t`` (steps 1-3 of docs/rules.md section 3), or WIN."""
        rs = self.rs
        if self.wins(x, t):
            return WIN
        s1 = x.score + t
        if rs.barrel.kind == "points" and s1 >= rs.barrel.threshold:
            s1 = rs.barrel.threshold  # the barrel cannot be jumped over
        bolts = 0 if rs.bolts.consecutive else x.bolts
        y = x._replace(opened=True, bolts=bolts)
        if s1 in rs.dump:
            return self.normalise(y._replace(score=0), before=x.score)
        return self.normalise(y._replace(score=s1), before=x.score)

    def zero(self, x: PlayerState, overshoot: bool = False) -> PlayerState:
        """The mover's state after a zero turn (a bust; with ``overshoot``, an
        overshoot of an exact barrel, which counts a point instead of a bolt)."""
        rs = self.rs
        y = x
        if overshoot:
            n = x.overshoots + 1
            if n >= rs.barrel.overshoots:
                y = self._fall(y._replace(overshoots=0))
            else:
                y = y._replace(overshoots=n)
        bolt_due = False
        if not overshoot and rs.bolts.limit and not self.exempt(x):
            n = x.bolts + 1
            bolt_due = n >= rs.bolts.limit
            y = y._replace(bolts=0 if bolt_due else n)
        if rs.pit_attempts and self.in_pit(x) and y.score == x.score:
            n = x.pit_tries + 1
            if n >= rs.pit_attempts:
                low = rs.pit_of(x.score).low
                y = self._set_score(y._replace(pit_tries=0, pit_entry=0), min(x.pit_entry, low - rs.unit))
            else:
                y = y._replace(pit_tries=n)
        if rs.barrel.kind == "points" and rs.barrel.attempts and self.on_barrel(x) and y.score == x.score:
            n = x.barrel_tries + 1
            y = self._fall(y) if n >= rs.barrel.attempts else y._replace(barrel_tries=n)
        if bolt_due:
            y = self._set_score(y, y.score - rs.bolts.penalty)
        return self.normalise(y)

    def mid_turn_end(self, x: PlayerState, t: int, event: str) -> PlayerState | str:
        """The mover's state after a turn ended by ``event`` at total ``t``."""
        if event == "dump":
            return self.bank(x, t)
        return self.zero(x, overshoot=True)

    # ------------------------------------------------------------ opponents

    def raised_to(self, x: PlayerState, t: int) -> int:
        """The mover's score reached by banking ``t`` (with the barrel cap, before
        samosval): the ``s'`` that overtaking compares opponents with."""
        rs = self.rs
        s1 = x.score + t
        if rs.barrel.kind == "points" and not rs.on_barrel(x.score):
            s1 = min(s1, rs.barrel.threshold)
        return s1

    def climbed(self, x: PlayerState, y: PlayerState | str) -> bool:
        """Whether the move x -> y put the mover onto the barrel."""
        return (
            y != WIN and self.rs.barrel.kind != "none" and not self.rs.on_barrel(x.score) and self.rs.on_barrel(y.score)
        )

    def push_off(self, o: PlayerState, climbed: bool) -> PlayerState:
        """Another player after the mover climbed onto the barrel (``climbed``): knocked
        off it if on it (docs/rules.md section 3, step 4)."""
        rs = self.rs
        if climbed and rs.on_barrel(o.score):
            p = rs.barrel.push_off
            if p == "fall":
                o = self._fall(o)
            elif p == "penalty":
                o = self._set_score(o, o.score - rs.barrel.push_off_penalty)
            elif p == "open_min":
                o = self._set_score(o._replace(barrel_tries=0, barrel_entry=0), rs.open_min)
        return o

    def overtaken(self, o: PlayerState, before: int, after: int) -> PlayerState:
        """Another player after the mover's score went from ``before`` to ``after``:
        overtaking costs ``overtake`` points when ``before < o < after`` (step 5)."""
        if self.rs.overtake and before < o.score < after:
            o = self._set_score(o, o.score - self.rs.overtake)
        return o

    def affect_opponent(self, o: PlayerState, before: int, after: int, climbed: bool) -> PlayerState:
        """An opponent after the mover's score went from ``before`` to ``after``
        (push-off, then overtaking; docs/rules.md section 3, steps 4-5)."""
        return self.overtaken(self.push_off(o, climbed), before, after)
