"""thousand.engine: what a turn does -- a player's state and what a turn's end does to it
(:mod:`.player`), the turn in play as one state machine (:mod:`.turn`), one turn's ends as
arrays (:mod:`.ends`), the sparse player state space (:mod:`.states`), poker dice's turn.

May import thousand.base, thousand.rules and thousand.kernel. The names of the former
module ``thousand.engine`` are offered here (:mod:`thousand.engine.turn`).
"""

from thousand.base.exports import lazy_names

_WHERE = {
    "Action": ".turn",
    "GameStep": ".turn",
    "MAX_TURNS": ".turn",
    "TOTAL_CAP": ".turn",
    "TurnEnd": ".turn",
    "TurnResult": ".turn",
    "TurnRules": ".turn",
    "TurnState": ".turn",
    "finish_turn": ".turn",
    "next_in_round": ".turn",
    "next_turn": ".turn",
    "roll_outcomes": ".turn",
    "round_winners": ".turn",
    "still_to_play": ".turn",
}
__getattr__, __dir__ = lazy_names(__name__, _WHERE)
__all__ = sorted(_WHERE)
