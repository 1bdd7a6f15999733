"""Advice for the player to move in poker dice: stop, or which dice to re-roll, with the
chance of winning (or of reaching a hand) for every option.

The situation (:class:`Situation`) is what the game solver needs: the best hand so far,
how many hold it, how many play after the mover. The turn (:class:`PokerTurnState`) is
the five dice showing, which throw this was, and which of them may still be thrown (the
lock rule). The values come from one solved turn (:func:`thousand.engine.poker.solve_turn`)
for the mover's utility (:meth:`PokerSolution.utility`), so every option is exact.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.engine.poker import KEEP_ID, TurnSolution, _minus, _submultisets, solve_turn, turn_shape
from thousand.rules.poker import PokerRuleset, check_dice

__all__ = [
    "PokerAdvice",
    "PokerOption",
    "PokerTurnState",
    "Situation",
    "advise",
    "advise_reach",
    "options_of",
    "reach_probability",
    "reach_utility",
    "turn_state",
]


@dataclass(frozen=True)
class Situation:
    """``best``: the strength of the best hand so far (None for the first player);
    ``holders``: how many earlier players hold it; ``after``: players still to play after
    the mover."""

    best: int | None = None
    holders: int = 0
    after: int = 0

    @property
    def remaining(self) -> int:
        return self.after + 1

    @property
    def players(self) -> int:
        """The fewest players a game with this situation has."""
        return self.holders + self.after + 1

    def describe(self, rs: PokerRuleset) -> str:
        seat = _("{n} to play after you").format(n=self.after) if self.after else _("you play last")
        if self.best is None:
            return _("first to play; {seat}").format(seat=seat)
        held = _("held by 1 player") if self.holders == 1 else _("held by {n} players (tied)").format(n=self.holders)
        return _("to beat: {hand}, {held}; {seat}").format(hand=rs.hands.describe(self.best), held=held, seat=seat)


@dataclass(frozen=True)
class PokerTurnState:
    """Five dice showing after throw ``throw``; ``free`` the ones that may still be thrown."""

    dice: tuple[int, ...]
    throw: int
    free: tuple[int, ...]

    @property
    def locked(self) -> tuple[int, ...]:
        return _minus(self.dice, self.free)


def turn_state(rs: PokerRuleset, dice, throw: int = 1, free=None) -> PokerTurnState:
    """A checked turn state: ``free`` defaults to every die at throw 1 (and always with free
    re-rolls); under the lock rule it must be given after throw 2 or later."""
    d = check_dice(dice)
    if not 1 <= throw <= rs.rolls:
        raise StateError(_("throw {k}: a turn has throws 1 to {n}").format(k=throw, n=rs.rolls))
    if free is None:
        if throw > 1 and rs.lock_kept and throw < rs.rolls:
            raise StateError(
                _(
                    "after throw {k} only the dice thrown at throw {k} may be re-rolled "
                    "(the lock rule): say which they are (--rerollable)"
                ).format(k=throw)
            )
        free = d
    f = tuple(sorted(int(x) for x in free))
    if Counter(f) - Counter(d):
        raise StateError(
            _("re-rollable dice {free} are not among the dice showing {dice}").format(
                free=",".join(map(str, f)), dice=",".join(map(str, d))
            )
        )
    if throw == 1 and f != d:
        raise StateError(_("at throw 1 every die may be re-rolled"))
    if not rs.lock_kept and f != d:
        raise StateError(
            _("{name} has free re-rolls (lock_kept = false): every die may be re-rolled").format(name=rs.name)
        )
    if not f and throw < rs.rolls:
        raise StateError(_("after throw {k} at least one die was just thrown").format(k=throw))
    return PokerTurnState(d, throw, f)


@dataclass
class PokerOption:
    reroll: tuple[int, ...]  # () = stop
    value: float

    @property
    def label(self) -> str:
        return _("stop") if not self.reroll else _("re-roll {dice}").format(dice=",".join(map(str, self.reroll)))


@dataclass
class PokerAdvice:
    rs: PokerRuleset
    objective: str  # "win" or "reach"
    situation: str
    state: PokerTurnState
    hand: str
    options: list[PokerOption]  # best first (the solver's choice), then by value
    note: str = ""

    @property
    def value_name(self) -> str:
        return "win_probability" if self.objective == "win" else "reach_probability"

    @property
    def best(self) -> PokerOption:
        return self.options[0]

    def to_json(self) -> dict:
        s = self.state
        return {
            "ruleset": self.rs.name,
            "ruleset_hash": self.rs.hash,
            "objective": self.objective,
            "situation": self.situation,
            "dice": list(s.dice),
            "throw": s.throw,
            "rolls": self.rs.rolls,
            "rerollable": list(s.free),
            "hand": self.hand,
            "best": self.best.label,
            "value": self.value_name,
            "note": self.note or None,
            "options": [
                {
                    "action": "stop" if not o.reroll else "reroll",
                    "reroll": list(o.reroll),
                    "keep": list(_minus(s.dice, o.reroll)),
                    "label": o.label,
                    self.value_name: o.value,
                }
                for o in self.options
            ],
        }

    def render(self, limit: int = 12) -> str:
        s = self.state
        name = _("chance to win") if self.objective == "win" else _("chance to reach it")
        lines = [
            f"{self.rs.name}: {self.situation}",
            _("throw {k} of {n}: {dice} — {hand}").format(
                k=s.throw, n=self.rs.rolls, dice=",".join(map(str, s.dice)), hand=self.hand
            ),
        ]
        if self.rs.lock_kept and s.throw > 1 and s.free != s.dice and s.throw < self.rs.rolls:
            lines.append(
                "  " + _("you may re-roll only {dice} (the lock rule)").format(dice=",".join(map(str, s.free)))
            )
        if self.note:
            lines.append(self.note)
        top = max(o.value for o in self.options) or 1.0
        width = max(len(o.label) for o in self.options[:limit])
        best = _("best")
        for k, o in enumerate(self.options[:limit]):
            bar = "█" * int(round(20 * o.value / top)) if top > 0 else ""
            mark = best if k == 0 else ""
            lines.append(f"  {mark:{len(best)}}  {o.label:<{width}}  {name} {o.value:.6f}  {bar}")
        if len(self.options) > limit:
            lines.append("  " + _("... {n} more options (--json lists them all)").format(n=len(self.options) - limit))
        if len(self.options) > 1:
            lines.append(
                "  "
                + _("margin to the second-best option: {m}").format(
                    m=f"{self.options[0].value - self.options[1].value:.6f}"
                )
            )
        return "\n".join(lines)


def options_of(rs: PokerRuleset, sol: TurnSolution, u_roll: np.ndarray, st: PokerTurnState) -> list[PokerOption]:
    """Every option at ``st`` with its value in the solved turn (row 0), the solver's
    choice first, the rest by value (re-rolling fewer dice first on equal values)."""
    from thousand.engine.poker import KEEPS, ROLL_ID

    shape = sol.shape
    stop = PokerOption((), float(u_roll[ROLL_ID[st.dice]]))
    if st.throw >= rs.rolls:
        return [stop]
    opts = [stop]
    C = sol.C[st.throw + 1][0]
    for y in _submultisets(st.free):
        if len(y) == len(st.free):
            continue
        keep = tuple(sorted(st.locked + y))
        opts.append(PokerOption(_minus(st.free, y), float(C[KEEP_ID[keep]])))
    act = int(sol.action[st.throw][0, shape.state_of(st.locked, st.free)])
    chosen = () if act < 0 else _minus(st.dice, KEEPS[act])
    opts.sort(key=lambda o: (o.reroll != chosen, -o.value, len(o.reroll), o.reroll))
    return opts


def advise(rs: PokerRuleset, solution, situation: Situation, st: PokerTurnState) -> PokerAdvice:
    """Win-probability advice from a :class:`PokerSolution`."""
    hands = rs.hands
    if situation.players > solution.players:
        raise StateError(
            _("{n} players; the table covers up to {top}").format(n=situation.players, top=solution.players)
        )
    u = solution.utility(situation.best, situation.holders, situation.remaining)
    u_roll = u[solution.strength_of_roll]
    sol = solve_turn(turn_shape(rs.lock_kept), rs.rolls, u_roll)
    note = ""
    if situation.best is not None and hands.strength(st.dice) < situation.best and st.throw >= rs.rolls:
        note = _("your hand does not beat the best so far: you have lost this game")
    return PokerAdvice(
        rs,
        "win",
        situation.describe(rs),
        st,
        hands.describe(hands.strength(st.dice)),
        options_of(rs, sol, u_roll, st),
        note,
    )


def reach_utility(rs: PokerRuleset, target: int) -> np.ndarray:
    """1 for every roll whose hand is at least as strong as ``target``, else 0."""
    hands = rs.hands
    from thousand.rules.poker import ROLLS

    return np.array([1.0 if hands.strength(d) >= target else 0.0 for d in ROLLS])


def reach_probability(rs: PokerRuleset, target: int) -> float:
    """The chance of ending one turn with a hand at least as strong as ``target``, playing for it."""
    return float(solve_turn(turn_shape(rs.lock_kept), rs.rolls, reach_utility(rs, target)).value[0])


def advise_reach(rs: PokerRuleset, target: int, st: PokerTurnState) -> PokerAdvice:
    """Solitaire advice: the chance of reaching at least ``target`` for every option."""
    u_roll = reach_utility(rs, target)
    sol = solve_turn(turn_shape(rs.lock_kept), rs.rolls, u_roll)
    hands = rs.hands
    return PokerAdvice(
        rs,
        "reach",
        _("solitaire: reach at least {hand}").format(hand=hands.describe(target)),
        st,
        hands.describe(hands.strength(st.dice)),
        options_of(rs, sol, u_roll, st),
    )
