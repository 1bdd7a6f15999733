"""What an approximation was measured to cost, on games of the same kind, in a player's words.

The measurements live in one data file (``solver/thousand/solvers/approx_measured.json``,
written by ``bench/bench_approx.py --write`` and ``bench/bench_duel_approx.py --write``):
for each measured game, the win chance one player gives up by playing the approximation
among equilibrium (or, for two players, optimal) players, seat by seat.

A cost is quoted only where it was measured on the same kind of game: the same number of
players, equal turns or not, the same family of rules (the same preset). For a game longer
than every measured one of its kind the words say so, and where that kind was measured at
three lengths or more they add the power law fitted to the worst losses (:func:`growth`),
followed to this game's length: a projection, with how far the measured points lie from
the line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from thousand.base.i18n import _
from thousand.rules.ruleset import Ruleset

__all__ = [
    "Cost",
    "Growth",
    "growth",
    "least_in_family",
    "least_where_all",
    "measured_cases",
    "measured_cost",
    "percent",
]


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
    projected: tuple[float, float] | None = None  # longer: the fit's worst loss at this goal, and its spread factor

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
        if self.longer and self.projected is not None:
            mid, factor = self.projected
            text += " " + _(
                "This game is longer than any measured (up to {goal}); the losses measured at several lengths, "
                "followed to this one, give about {mid} here (a projection: the measured losses lie within "
                "{factor} times of the line followed)."
            ).format(goal=self.longest, mid=percent(mid), factor=f"{factor:.1f}")
        elif self.longer:
            text += " " + _(
                "This game is longer than any measured (up to {goal}): the cost here may be larger or smaller "
                "(on the games measured at several lengths it grew for some methods and fell for others)."
            ).format(goal=self.longest)
        return text

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "loss_low": self.low,
            "loss_high": self.high,
            "measured_on": list(self.where),
            "longer_than_measured": self.longer,
            "projected": list(self.projected) if self.projected else None,
        }


@dataclass(frozen=True)
class Growth:
    """How the worst one-seat loss of a method grows with the goal, on games of one kind:
    the least-squares line ``log(loss) = log(a) + b log(goal)`` through the measured
    points, i.e. ``loss = a goal^b``.

    ``spread`` is the residuals' standard deviation on the log scale (None with two points:
    the line goes through both); a projection to ``goal`` is the line there with the 95%
    prediction interval of the regression (Student's t with ``n - 2`` degrees of freedom;
    with two points no error estimate: the interval is the point itself)."""

    method: str
    goals: tuple[int, ...]
    losses: tuple[float, ...]
    a: float
    b: float
    spread: float | None

    def at(self, goal: float) -> tuple[float, float, float]:
        """(low, mid, high): the fit at ``goal`` and its 95% prediction interval."""
        x = [math.log(g) for g in self.goals]
        mid = math.log(self.a) + self.b * math.log(goal)
        if self.spread is None:
            return (math.exp(mid),) * 3
        n = len(x)
        mean = sum(x) / n
        sxx = sum((v - mean) ** 2 for v in x)
        from scipy.stats import t as student

        t95 = float(student.ppf(0.975, n - 2))
        half = t95 * self.spread * math.sqrt(1 + 1 / n + (math.log(goal) - mean) ** 2 / sxx)
        return math.exp(mid - half), math.exp(mid), math.exp(mid + half)


def growth(method: str, rs: Ruleset, players: int) -> Growth | None:
    """The fit of the worst measured loss of ``method`` against the goal, on games of the
    kind of ``rs`` with ``players`` players (one point per goal: the worst over the cases
    and seats measured there); None below two goals with a positive loss."""
    worst: dict[int, float] = {}
    for c in measured_cases():
        if _alike(c, rs, players) and c["losses"].get(method):
            g = int(c["goal"])
            worst[g] = max(worst.get(g, 0.0), max(c["losses"][method]))
    pts = sorted((g, v) for g, v in worst.items() if v > 0)
    if len(pts) < 2:
        return None
    x = [math.log(g) for g, _v in pts]
    y = [math.log(v) for _g, v in pts]
    n = len(pts)
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((v - mx) ** 2 for v in x)
    b = sum((u - mx) * (v - my) for u, v in zip(x, y)) / sxx
    a = math.exp(my - b * mx)
    spread = None
    if n > 2:
        spread = math.sqrt(sum((v - (my + b * (u - mx))) ** 2 for u, v in zip(x, y)) / (n - 2))
    return Growth(method, tuple(g for g, _v in pts), tuple(v for _g, v in pts), a, b, spread)


def _alike(case: dict, rs: Ruleset, players: int) -> bool:
    """The same kind of game: as many players, equal turns alike, the same preset family."""
    return (
        case.get("players") == players
        and bool(case.get("equal_turns", False)) == bool(rs.equal_turns)
        and case.get("preset") == _family(rs)
    )


def least_in_family(methods, rs: Ruleset) -> str | None:
    """Of ``methods``, the one with the smallest worst loss over every game of the family
    of ``rs`` (equal turns alike) measured with any number of players: what to play on a
    kind of game measured with another number of players only (its cost is not quoted)."""
    worst: dict[str, float] = {}
    for c in measured_cases():
        if c.get("preset") != _family(rs) or bool(c.get("equal_turns", False)) != bool(rs.equal_turns):
            continue
        if c.get("players", 2) < 3 or not all(c["losses"].get(m) for m in methods):
            continue  # compared where all of them were measured
        for m in methods:
            worst[m] = max(worst.get(m, 0.0), max(c["losses"][m]))
    return min(worst, key=worst.get) if worst else None


def least_where_all(methods, rs: Ruleset, players: int) -> str | None:
    """Of ``methods``, the one with the smallest worst loss over the games of the kind of
    ``rs`` with ``players`` players where every one of them was measured (a method measured
    on fewer lengths is compared on those alone); None where they never were together."""
    worst: dict[str, float] = {}
    for c in measured_cases():
        if _alike(c, rs, players) and all(c["losses"].get(m) for m in methods):
            for m in methods:
                worst[m] = max(worst.get(m, 0.0), max(c["losses"][m]))
    return min(worst, key=worst.get) if worst else None


def _family(rs: Ruleset) -> str:
    """The preset a ruleset was made from (its name up to any ``+``/file suffix)."""
    return rs.name.split("+")[0].split(" ")[0]


def measured_cost(method: str, rs: Ruleset, players: int, seat_last: bool | None = None) -> Cost | None:
    """The measured cost of ``method`` on games of the kind of ``rs`` with ``players``
    players (with equal turns, in seats like the mover's: ``seat_last`` the last of the
    round, else an earlier one); None where none was measured."""
    cases = sorted(
        (c for c in measured_cases() if _alike(c, rs, players) and c["losses"].get(method)), key=lambda c: c["goal"]
    )
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
    longer = rs.goal > longest
    fit = growth(method, rs, players) if longer and seat_last is None else None
    # a projection needs three lengths at least: through two points a line has no error to tell
    projected = (fit.at(rs.goal)[1], math.exp(fit.spread)) if fit is not None and fit.spread is not None else None
    return Cost(method, min(losses), max(losses), where, longest, longer, projected)
