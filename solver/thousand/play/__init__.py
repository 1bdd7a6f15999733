"""thousand.play: the scorekeeper of a real game -- what every scorekeeper shares
(:mod:`.session`), the 1000 family's game and its advice (:mod:`.game`), poker dice's.

May import every layer below it (base to analysis); the web page and the command line
drive it. The names of the former module ``thousand.play`` are offered here.
"""

from thousand.base.exports import lazy_names

__all__ = [
    "HELP",
    "SAVE_FORMAT",
    "SMALL_DUEL",
    "SMALL_DUEL_EQUAL_TURNS",
    "Advisors",
    "Game",
    "LoggedGame",
    "Turn",
    "advice_json",
    "advice_text",
    "autosave_dir",
    "best_duel_method",
    "equal_turns_method",
    "game_entry",
    "handle_line",
    "keep_label",
    "measured_cost",
    "normalise_entry",
    "open_game",
    "overshoots_fell",
    "run_command",
    "run_session",
    "save_game",
    "session_command",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "Advisors": ".game",
        "Game": ".game",
        "HELP": ".game",
        "SMALL_DUEL": ".game",
        "SMALL_DUEL_EQUAL_TURNS": ".game",
        "Turn": ".game",
        "advice_json": ".game",
        "advice_text": ".game",
        "best_duel_method": ".game",
        "equal_turns_method": ".game",
        "game_entry": ".game",
        "keep_label": ".game",
        "measured_cost": ".game",
        "normalise_entry": ".game",
        "open_game": ".game",
        "overshoots_fell": ".game",
        "run_command": ".game",
        "LoggedGame": ".session",
        "SAVE_FORMAT": ".session",
        "autosave_dir": ".session",
        "handle_line": ".session",
        "run_session": ".session",
        "save_game": ".session",
        "session_command": ".session",
    },
)
