"""The rules of a turn in play: one state machine for every tool (docs/rules.md sections 1-7).

Everything that plays, advises, evaluates or keeps score walks a turn through
:class:`TurnRules` and applies its end with :func:`finish_turn`; the compiled
kernel and simulator are fast encodings of the same rules and are tested
against this module (``tests/test_conformance.py``).

A turn in play is a :class:`TurnState`: the mover's state at the start of the
turn, the turn total so far, the dice to roll next and, once thrown, the roll
waiting for a set-aside. Two kinds of node alternate:

* **before a roll** (``roll is None``), a chance node: :meth:`TurnRules.outcomes`
  lists every sorted roll with its probability; the player may also stop here
  (:meth:`TurnRules.can_stop`, :meth:`TurnRules.stop`) unless a roll of hot
  dice is compulsory (``must_roll``, ``confirm``);
* **after a roll** (:meth:`TurnRules.after_roll`): a bust or an instant win
  ends the turn at once; otherwise the player picks one of
  :meth:`TurnRules.legal` -- the dice to set aside and whether to roll on or
  stop -- and :meth:`TurnRules.apply` gives the next state or the turn's end.

Setting dice aside (:meth:`TurnRules.keep`) is where the forced ends live: a
mid-turn dump (the turn total makes the score a dump score), an overshoot of an
exact barrel, and a confirming roll of hot dice that banks at once. When every
die has been set aside the player takes all of them again (hot dice).

A finished turn is a :class:`TurnEnd`; :func:`finish_turn` applies it to every
player of a game (any number of them): the mover's bank or zero turn with its
counters, then push-off and overtaking for each other player (docs/rules.md
section 3), all through :class:`thousand.engine.player.Moves`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from math import factorial
from typing import NamedTuple

import numpy as np

from thousand.base.errors import Refused, StateError
from thousand.base.i18n import _, dice_count
from thousand.rules.ruleset import Ruleset
from thousand.rules.scoring import RollScorer

from .player import WIN, Moves, PlayerState

__all__ = [
    "MAX_TURNS",
    "TOTAL_CAP",
    "Action",
    "GameStep",
    "TurnEnd",
    "TurnResult",
    "TurnRules",
    "TurnState",
    "finish_turn",
    "next_in_round",
    "next_turn",
    "roll_outcomes",
    "round_winners",
    "still_to_play",
]

MAX_TURNS = 5000  # turns after which a game is abandoned (bots that never bank); every game loop
TOTAL_CAP = 10  # a turn total above this many times the goal is refused as no turn of the game


class TurnState(NamedTuple):
    """A turn in play: ``player`` (the mover at the start of the turn), ``total`` (points
    of this turn so far), ``dice`` (to roll next) and ``roll`` (sorted faces thrown and
    waiting for a set-aside; None before a roll)."""

    player: PlayerState
    total: int
    dice: int
    roll: tuple[int, ...] | None = None


class TurnEnd(NamedTuple):
    """How a turn ended: ``kind`` is ``"stop"`` (banked ``total`` points), ``"forced"``
    (ended the moment the total reached ``total``; ``event`` ``"dump"`` or
    ``"overshoot"``), ``"bust"`` (a roll that scores nothing) or ``"win"`` (an
    instant-win pattern). A confirming roll that banks at once is a ``"stop"``."""

    kind: str
    total: int = 0
    event: str | None = None


@dataclass(frozen=True)
class Action:
    """Set ``keep`` aside (sorted faces), then roll on (``roll``) or stop.

    ``then`` says what follows: ``"roll"``, ``"stop"``, or for a continuation the
    rules force, ``"roll (compulsory)"``, ``"banked (confirmed)"``, ``"ends (dump)"``,
    ``"ends (overshoot)"``; then the ``roll`` flag is what happens anyway."""

    keep: tuple[int, ...]
    roll: bool
    points: int = field(default=0, compare=False)
    then: str = field(default="", compare=False)

    @property
    def forced(self) -> bool:
        return self.then not in ("roll", "stop")

    def label(self) -> str:
        return (
            f"keep {','.join(map(str, self.keep))} (+{self.points}), "
            f"then {self.then or ('roll' if self.roll else 'stop')}"
        )

    def to_json(self) -> dict:
        return {
            "keep": list(self.keep),
            "then": "roll" if self.roll else "stop",
            "points": self.points,
            "forced": self.forced,
        }


def roll_outcomes(rs: Ruleset, n: int) -> list[tuple[tuple[int, ...], float]]:
    """Every sorted roll of ``n`` dice with its probability (multinomial count / faces**n)."""
    out = []
    denom = rs.faces**n
    for roll in combinations_with_replacement(range(1, rs.faces + 1), n):
        w = factorial(n)
        for f in set(roll):
            w //= factorial(roll.count(f))
        out.append((roll, w / denom))
    return out


class TurnRules:
    """The rules of a turn in play for one ruleset (see the module docstring).

    Results that depend only on the roll or on (player, total, roll) are cached, so
    that enumerating every turn of a game (exact evaluation) stays cheap."""

    def __init__(self, rs: Ruleset):
        self.rs = rs
        self.moves = Moves(rs)
        self.scorer = RollScorer(rs)
        self._set_asides: dict = {}
        self._instant: dict = {}
        self._legal: dict = {}
        self._outcomes: dict = {}
        self._reach = np.zeros((0, rs.dice + 1), dtype=bool)
        self._options = None

    # ------------------------------------------------------------ states

    def start(self, x: PlayerState) -> TurnState:
        """The state at the start of a turn: every die to roll, nothing banked yet."""
        return TurnState(x, 0, self.rs.dice)

    def state(
        self, x: PlayerState, total: int = 0, dice: int | None = None, roll: tuple[int, ...] | None = None
    ) -> TurnState:
        """A turn state a user describes, checked: a :class:`StateError` says why the
        rules cannot produce it."""
        rs, u = self.rs, self.rs.unit
        if total < 0 or total % u:
            raise StateError(_("turn total {t} must be a non-negative multiple of {u}").format(t=total, u=u))
        if roll is not None:
            n = len(roll)
            if dice is not None and dice != n:
                raise StateError(_("--dice {dice} does not match a roll of {n} dice").format(dice=dice, n=n))
            roll = tuple(sorted(roll))
        else:
            n = rs.dice if dice is None else dice
        if not 1 <= n <= rs.dice:
            raise StateError(_("dice must be 1 to {top}, got {n}").format(top=rs.dice, n=n))
        if total == 0 and n != rs.dice:
            raise StateError(
                _("a turn starts by rolling all {all} dice: with {n} dice the turn total must be positive").format(
                    all=rs.dice, n=n
                )
            )
        if total > TOTAL_CAP * rs.goal:
            raise StateError(
                _("turn total {t}: a turn of this game does not reach {cap} times the goal").format(
                    t=total, cap=TOTAL_CAP
                )
            )
        ev = self.moves.mid_turn(x, total) if total > 0 else None
        if ev:
            raise StateError(
                _("a turn total of {t} from score {s} would already have ended the turn ({event})").format(
                    t=total, s=x.score, event=_(ev)
                )
            )
        return TurnState(x, total, n, roll)

    def check_reachable(self, s: TurnState) -> TurnState:
        """``s`` if some turn reaches it, else a :class:`StateError` (for states a user
        gives; the DP itself has values at every total)."""
        if s.total > 0 and not self.reachable(s.total, s.dice):
            raise StateError(
                _(
                    "a turn total of {t} with {dice} to roll cannot occur: no set-asides add up "
                    "to it with that many dice left"
                ).format(t=s.total, dice=dice_count(s.dice))
            )
        return s

    def reachable(self, total: int, dice: int) -> bool:
        """Whether some sequence of set-asides from the start of a turn reaches ``total``
        points with ``dice`` dice to roll (all dice again after hot dice): a forward pass
        over (total, dice), the options of every roll of every dice count."""
        u = self.rs.unit
        t = total // u
        if t >= len(self._reach):
            self._extend_reach(t)
        return bool(self._reach[t, dice])

    def _extend_reach(self, t: int) -> None:
        from thousand.kernel import roll_table

        tab, N = roll_table(self.rs), self.rs.dice
        if self._options is None:  # the distinct (units added, dice left) of each dice count
            self._options = {
                n: sorted(
                    {
                        (int(tab.opt_points[o]), n - int(tab.opt_used[o]) or N)
                        for k in range(tab.cls_ptr[n], tab.cls_ptr[n + 1])
                        for o in range(tab.opt_ptr[k], tab.opt_ptr[k + 1])
                    }
                )
                for n in range(1, N + 1)
            }
        old = self._reach
        reach = np.zeros((max(2 * len(old), t + 1), N + 1), dtype=bool)
        reach[: len(old)] = old
        reach[0, N] = True
        for k in range(len(reach)):  # every option adds at least one unit: one pass in order
            for n in np.flatnonzero(reach[k]):
                for pts, m in self._options[n]:
                    if k + pts < len(reach):
                        reach[k + pts, m] = True
        self._reach = reach

    def compulsory(self, s: TurnState) -> bool:
        """Whether the next roll is a compulsory roll of hot dice (``must_roll``, ``confirm``)."""
        return s.total > 0 and s.dice == self.rs.dice and self.rs.hot_dice != "free"

    def confirming(self, s: TurnState) -> bool:
        """Whether the next roll (or the roll showing) confirms the turn (``confirm``):
        if it scores and banking is allowed, the turn is banked at once."""
        return self.compulsory(s) and self.rs.hot_dice == "confirm"

    # ------------------------------------------------------------ before a roll

    def outcomes(self, s: TurnState) -> list[tuple[tuple[int, ...], float]]:
        """The chance node before a roll: every sorted roll of ``s.dice`` dice and its probability."""
        r = self._outcomes.get(s.dice)
        if r is None:
            r = self._outcomes[s.dice] = roll_outcomes(self.rs, s.dice)
        return r

    def stop_refusal(self, s: TurnState) -> str | None:
        """Why the player cannot stop before this roll (None if they can), in words."""
        rs, x, t = self.rs, s.player, s.total
        if s.roll is not None:
            return _("set dice aside from {roll} first").format(roll=",".join(map(str, s.roll)))
        if t <= 0:
            return _("nothing to bank yet: a turn starts with a roll")
        if self.compulsory(s):
            return _("hot dice: rolling all {n} dice again is compulsory").format(n=s.dice)
        if self.moves.can_bank(x, t):
            return None
        if not x.opened and t < rs.open_min:
            return _("not opened yet: the first bank needs at least {need} in one turn (have {t})").format(
                need=rs.open_min, t=t
            )
        if t < rs.min_bank:
            return _("every bank needs at least {need} in one turn (have {t})").format(need=rs.min_bank, t=t)
        pit = rs.pit_of(x.score)
        if pit and x.score + t < pit.exit:
            return _("in the pit from {low} to {exit}: the bank must reach {exit} ({s} + {t} = {sum})").format(
                low=pit.low, exit=pit.exit, s=x.score, t=t, sum=x.score + t
            )
        if rs.barrel.kind == "exact" and x.score + t > rs.goal:
            return _("over {goal}: the open barrel needs exactly {goal}").format(goal=rs.goal)
        if rs.on_barrel(x.score):
            return _("on the barrel: only a bank that reaches {goal} is allowed ({s} + {t} = {sum})").format(
                goal=rs.goal, s=x.score, t=t, sum=x.score + t
            )
        return _("banking {t} is not allowed from {state}").format(t=t, state=x.describe(rs))  # pragma: no cover

    def can_stop(self, s: TurnState) -> bool:
        """Whether the player may stop and bank ``s.total`` before this roll."""
        return s.roll is None and s.total > 0 and not self.compulsory(s) and self.moves.can_bank(s.player, s.total)

    def stop(self, s: TurnState) -> TurnEnd:
        """Stop before the roll and bank the turn total (:class:`Refused` if not allowed)."""
        why = self.stop_refusal(s)
        if why:
            raise Refused(why)
        return TurnEnd("stop", s.total)

    # ------------------------------------------------------------ after a roll

    def set_asides(self, roll: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        """The legal set-asides of a sorted roll as ``(points, dice)``, most points first."""
        r = self._set_asides.get(roll)
        if r is None:
            r = self._set_asides[roll] = self.scorer.set_asides(roll)
            self._instant[roll] = self.scorer.is_instant_win(roll)
        return r

    def instant_win(self, roll: tuple[int, ...]) -> bool:
        self.set_asides(roll)
        return self._instant[roll]

    def after_roll(self, s: TurnState, roll: Sequence[int]) -> TurnState | TurnEnd:
        """The roll ``roll`` of ``s.dice`` dice is thrown: an instant win or a bust ends the
        turn, otherwise the state waits for a set-aside."""
        roll = tuple(sorted(roll))
        if s.roll is not None:
            raise Refused(_("set dice aside from {roll} first").format(roll=",".join(map(str, s.roll))))
        if len(roll) != s.dice:
            raise Refused(_("{dice} to roll, not {n}").format(dice=dice_count(s.dice), n=len(roll)))
        if self.instant_win(roll):
            return TurnEnd("win")
        if not self.set_asides(roll):
            return TurnEnd("bust")
        return s._replace(roll=roll)

    def keep(self, s: TurnState, kept: Sequence[int]) -> TurnState | TurnEnd:
        """Set ``kept`` aside from the roll showing. The turn ends at once on a mid-turn
        dump, an overshoot, or a confirming roll that can bank; otherwise the next state
        is before a roll of the dice left (all of them again when none are: hot dice)."""
        if s.roll is None:
            raise Refused(_("there is no roll to set dice aside from (roll first)"))
        kept = tuple(sorted(kept))
        pts = next((p for p, d in self.set_asides(s.roll) if d == kept), None)
        if pts is None:
            raise Refused(
                _("cannot set aside {kept} from {roll}: legal are {legal}").format(
                    kept=",".join(map(str, kept)),
                    roll=",".join(map(str, s.roll)),
                    legal="; ".join(",".join(map(str, d)) for _p, d in self.set_asides(s.roll)),
                )
            )
        x, t1 = s.player, s.total + pts
        ev = self.moves.mid_turn(x, t1)
        if ev:
            return TurnEnd("forced", t1, ev)
        if self.confirming(s) and self.moves.can_bank(x, t1):
            return TurnEnd("stop", t1)
        left = s.dice - len(kept)
        return TurnState(x, t1, left if left else self.rs.dice)

    def legal(self, s: TurnState) -> tuple[Action, ...]:
        """Every legal action after the roll showing, set-asides with the most points first."""
        key = (s.player, s.total, s.roll)  # s.dice is len(s.roll)
        r = self._legal.get(key)
        if r is not None:
            return r
        out = []
        for pts, kept in self.set_asides(s.roll):
            nxt = self.keep(s, kept)
            if isinstance(nxt, TurnEnd):
                out.append(
                    Action(kept, False, pts, "banked (confirmed)" if nxt.kind == "stop" else f"ends ({nxt.event})")
                )
            elif self.compulsory(nxt):
                out.append(Action(kept, True, pts, "roll (compulsory)"))
            else:
                if self.can_stop(nxt):
                    out.append(Action(kept, False, pts, "stop"))
                out.append(Action(kept, True, pts, "roll"))
        r = self._legal[key] = tuple(out)
        return r

    def apply(self, s: TurnState, a: Action) -> TurnState | TurnEnd:
        """The state after the legal action ``a``: the next state before a roll, or the end."""
        nxt = self.keep(s, a.keep)
        if isinstance(nxt, TurnEnd) or a.roll:
            return nxt
        return self.stop(nxt)


# --------------------------------------------------------------------------- after a turn


@dataclass(frozen=True)
class TurnResult:
    """What a finished turn did to a game: every player's state after it (``players``;
    the mover's entry is :data:`thousand.engine.player.WIN` when the turn met the win
    condition), ``won``, ``final_total`` (the mover's total when ``won``), ``instant``
    (an instant-win pattern) and what the mover's bank did to other seats
    (``affected``: ``(seat, ("pushed off", "overtaken"))``, what applied)."""

    players: tuple
    won: bool
    final_total: int = 0
    instant: bool = False
    affected: tuple[tuple[int, tuple[str, ...]], ...] = ()


def finish_turn(
    moves: Moves, players: Sequence[PlayerState], mover: int, end: TurnEnd, finished: Sequence[int] = ()
) -> TurnResult:
    """Apply the end of the turn of seat ``mover`` to every player (docs/rules.md section 3).

    The mover's state: a bank (``stop``) or a mid-turn dump banks the total (barrel
    cap, samosval, counters), a bust or an overshoot is a zero turn (bolts, pit and
    barrel attempts, falls), an instant win wins. Every other seat not in
    ``finished`` (``equal_turns``: seats that already met the win condition) is then
    pushed off the barrel if the mover climbed onto it and overtaken if the mover's
    score passed it. A bank that meets the win condition is settled at the win check
    and changes nobody else (docs/rules.md section 7: with ``equal_turns`` the later
    seats play their last turns from their scores as they stand), and a zero turn
    leaves the others as they are.
    """
    x = players[mover]
    out = list(players)
    if end.kind == "win":
        out[mover] = WIN
        return TurnResult(tuple(out), True, 0, instant=True)
    if end.kind == "bust" or end.event == "overshoot":
        out[mover] = moves.zero(x, overshoot=end.event == "overshoot")
        return TurnResult(tuple(out), False)
    t = end.total
    x2 = moves.mid_turn_end(x, t, end.event) if end.event else moves.bank(x, t)
    if x2 == WIN:
        out[mover] = WIN
        return TurnResult(tuple(out), True, x.score + t)
    before, after, climbed = x.score, moves.raised_to(x, t), moves.climbed(x, x2)
    affected = []
    for j, o in enumerate(players):
        if j == mover or j in finished:
            continue
        pushed = moves.push_off(o, climbed)
        o2 = moves.overtaken(pushed, before, after)
        if o2 != o:
            out[j] = o2
            affected.append(
                (j, tuple(w for w, hit in (("pushed off", pushed != o), ("overtaken", o2 != pushed)) if hit))
            )
    out[mover] = x2
    return TurnResult(tuple(out), False, affected=tuple(affected))


def next_in_round(players: int, mover: int, finished) -> int | None:
    """The seat that moves after ``mover`` in a game of ``players`` seats, skipping the
    seats in ``finished`` (``equal_turns``: those that met the win condition); None when
    the round is complete with someone finished: the game is over
    (:func:`round_winners`). Seat 0 starts every round (docs/rules.md section 7)."""
    nxt = mover
    while True:
        nxt = (nxt + 1) % players
        if nxt == 0 and finished:
            return None
        if nxt not in finished:
            return nxt


def still_to_play(opponents: Sequence, seat: int) -> tuple:
    """Of the ``opponents`` of the player in ``seat`` (in the order they move next), those
    after it in the round: in a last turn, the players who still play theirs after it."""
    return tuple(opponents[: len(opponents) - seat])


def round_winners(finished: dict) -> list[int]:
    """The seats sharing the top final total of a completed round (each wins 1/k of k)."""
    top = max(finished.values())
    return [j for j, f in finished.items() if f == top]


class GameStep(NamedTuple):
    """Where a game stands after a turn (:func:`next_turn`): ``winners`` when it is over
    (several share a top under ``equal_turns``), else None with every player's state
    (``players``; a finished player with its final total as its score), the seat to move
    next and the ``finished`` seats, ``((seat, final total), ...)`` in seat order."""

    winners: tuple[int, ...] | None
    players: tuple = ()
    mover: int = 0
    finished: tuple[tuple[int, int], ...] = ()

    @property
    def to_beat(self) -> int | None:
        """The top final total of the round so far (None before anyone finished)."""
        return max(f for _s, f in self.finished) if self.finished else None

    @property
    def tied(self) -> int:
        """How many finished players hold :attr:`to_beat`."""
        top = self.to_beat
        return sum(1 for _s, f in self.finished if f == top)


def next_turn(moves: Moves, step: GameStep, end: TurnEnd) -> GameStep:
    """The game after seat ``step.mover`` ended its turn with ``end`` (docs/rules.md
    section 7): the first win ends the game, or with ``equal_turns`` the winner's final
    total is noted and the round completed (:func:`next_in_round`); the top of a complete
    round wins, shared by a tie; an instant-win pattern wins at once."""
    mover = step.mover
    after = finish_turn(moves, step.players, mover, end, finished=tuple(s for s, _f in step.finished))
    if not after.won and not step.finished:  # the common case: the next seat moves
        return GameStep(None, after.players, next_in_round(len(after.players), mover, ()))
    finished = dict(step.finished)
    players = list(after.players)
    if after.won:
        if not moves.rs.equal_turns or after.instant:
            return GameStep((mover,))
        finished[mover] = after.final_total
        players[mover] = step.players[mover]._replace(score=after.final_total)
    nxt = next_in_round(len(players), mover, finished)
    if nxt is None:
        return GameStep(tuple(round_winners(finished)))
    return GameStep(None, tuple(players), nxt, tuple(sorted(finished.items())))
