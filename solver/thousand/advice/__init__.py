"""thousand.advice: the one layer that decides what advice to give and says how it was
found -- a :class:`~thousand.advice.situation.Situation` in, :class:`~thousand.advice.policy.Part` s
out (:class:`~thousand.advice.policy.Advisor`), with the measured cost of an approximation
on games of the same kind (:mod:`thousand.advice.costs`).

May import every layer below it: base, rules, kernel, engine, solvers, tables.
"""

from thousand.base.exports import lazy_names

_WHERE = {
    "Advisor": ".policy",
    "Cost": ".costs",
    "Part": ".policy",
    "SMALL_DUEL": ".policy",
    "SMALL_DUEL_EQUAL_TURNS": ".policy",
    "Situation": ".situation",
    "advice_json": ".policy",
    "advice_text": ".policy",
    "measured_cost": ".costs",
}
__getattr__, __dir__ = lazy_names(__name__, _WHERE)
__all__ = sorted(_WHERE)
