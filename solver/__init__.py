"""thousand: the exact optimal-play solver for the dice game 1000 («Тысяча») and its family.

The public Python API (docs/api.md)::

    import thousand
    rs = thousand.load_ruleset("classic", ["goal=500"])
    sol = thousand.solve(rs, "race")            # or "turn", "duel"
    sol.start_value()                           # expected turns to win alone
    sol.advise(thousand.PlayerState(0, opened=False), roll=(1, 5, 3, 3, 4))

A turn in play is one state machine (:class:`TurnRules`); solved objectives are one
result type (:class:`Solution`) with the same fields for every objective.
"""

__version__ = "0.1.0"

from .advisor import Advice, Option  # noqa: E402
from .engine import Action, TurnEnd, TurnResult, TurnRules, TurnState, finish_turn  # noqa: E402
from .errors import (BotError, Refused, RulesetError, StateError, TableError,  # noqa: E402
                     ThousandError)
from .game import PlayerState  # noqa: E402
from .rules import Ruleset, load_ruleset, preset_names  # noqa: E402
from .solve import METHODS, OBJECTIVES, Solution, solve  # noqa: E402

__all__ = [
    "Action", "Advice", "BotError", "METHODS", "OBJECTIVES", "Option", "PlayerState", "Refused", "Ruleset",
    "RulesetError", "Solution", "StateError", "TableError", "ThousandError", "TurnEnd", "TurnResult",
    "TurnRules", "TurnState", "__version__", "finish_turn", "load_ruleset", "preset_names", "solve",
]
