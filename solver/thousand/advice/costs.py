"""What an approximation was measured to cost, on games of the same kind, in a player's words.

The measurements live in one data file (``solver/thousand/solvers/approx_measured.json``,
written by ``bench/bench_approx.py --write`` and ``bench/bench_duel_approx.py --write``):
for each measured game, the win chance one player gives up by playing the approximation
among equilibrium (or, for two players, optimal) players, seat by seat.

A cost is quoted only where it was measured on the same kind of game: the same number of
players, equal turns or not, the same family of rules (the same preset). For a game longer
than every measured one of its kind the words say so: the loss grows with the length of
the game, so the figure is a floor there, not a bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from thousand.base.i18n import _
from thousand.rules.ruleset import Ruleset

__all__ = ["Cost", "measured_cases", "measured_cost", "percent"]


@lru_cache(maxsize=1)
def _stored() -> tuple[dict, ...]:
    try:
        text = resources.files("thousand.solvers").joinpath("approx_measured.json").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return ()
    data = json.loads(text)
    return tuple(data.get("cases", [])) + tuple(data.get("duel_cases", []))


def measured_cases() -> list[dict]:
    """Every measured game (the N-player cases and the two-player ones), as stored."""
    return list(_stored())


def percent(p: float) -> str:
    """A chance (or a loss of chance) as a player reads it."""
    return f"{100 * p:.1f}%" if p >= 0.0005 else _("less than 0.05%")


@dataclass(frozen=True)
class Cost:
    """The measured loss of one method on games like the one at hand."""

    method: str
    low: float  # the least and the largest one-seat loss measured, in win chance
    high: float
    where: tuple[str, ...]  # the games, in words: "classic to 150, 3 players"
    longest: int  # the longest goal measured
    longer: bool  # the game at hand is longer than every one measured

    def words(self, seats: str | None = None) -> str:
        """The cost in sentences: the most it gave up, where, and whether this game is longer."""
        lo, hi = percent(self.low), percent(self.high)
        span = hi if lo == hi else _("{low} to {high}").format(low=lo, high=hi)
        places = "; ".join(self.where)
        text = (
            _("Measured: one player using it among exact players gave up {span} of winning chance, on {where}.")
            if seats is None
            else _(
                "Measured in {seats}: one player using it among exact players gave up {span} of winning chance, "
                "on {where}."
            )
        ).format(span=span, where=places, seats=seats)
        if self.longer:
            text += " " + _(
                "This game is longer than any measured (up to {goal}), and the cost grows with the length of "
                "the game: here it is likely more."
            ).format(goal=self.longest)
        return text

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "loss_low": self.low,
            "loss_high": self.high,
            "measured_on": list(self.where),
            "longer_than_measured": self.longer,
        }


def _alike(case: dict, rs: Ruleset, players: int) -> bool:
    """The same kind of game: as many players, equal turns alike, the same preset family."""
    return (
        case.get("players") == players
        and bool(case.get("equal_turns", False)) == bool(rs.equal_turns)
        and case.get("preset") == _family(rs)
    )


def _family(rs: Ruleset) -> str:
    """The preset a ruleset was made from (its name up to any ``+``/file suffix)."""
    return rs.name.split("+")[0].split(" ")[0]


def measured_cost(method: str, rs: Ruleset, players: int, seat_last: bool | None = None) -> Cost | None:
    """The measured cost of ``method`` on games of the kind of ``rs`` with ``players``
    players (with equal turns, in seats like the mover's: ``seat_last`` the last of the
    round, else an earlier one); None where none was measured."""
    cases = [c for c in measured_cases() if _alike(c, rs, players) and c["losses"].get(method)]
    if not cases:
        return None
    losses = []
    for c in cases:
        for k, v in enumerate(c["losses"][method]):
            if seat_last is None or (k == c["players"] - 1) == seat_last:
                losses.append(v)
    if not losses:
        return None
    # each kind of game once (variants of one game, its pits or barrel changed, counted)
    games = [
        _("{preset} to {goal}, {n} players").format(preset=c["preset"], goal=c["goal"], n=c["players"]) for c in cases
    ]
    where = tuple(
        g if games.count(g) == 1 else _("{game} ({k} variants)").format(game=g, k=games.count(g))
        for g in dict.fromkeys(games)
    )
    longest = max(int(c["goal"]) for c in cases)
    return Cost(method, min(losses), max(losses), where, longest, rs.goal > longest)
