"""thousand.play: the scorekeeper of a real game -- what every scorekeeper shares
(:mod:`.session`), the 1000 family's game and its advice (:mod:`.game`), poker dice's.

May import every layer below it (base to analysis); the web page and the command line
drive it. The names of the former module ``thousand.play`` are offered here.
"""

from thousand.base.exports import lazy_names

_WHERE = {
    "Advisors": ".game",
    "Game": ".game",
    "HELP": ".game",
    "SMALL_DUEL": ".game",
    "SMALL_DUEL_EQUAL_TURNS": ".game",
    "Turn": ".game",
    "advice_json": ".game",
    "advice_text": ".game",
    "game_entry": ".game",
    "keep_label": ".game",
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
}
__getattr__, __dir__ = lazy_names(__name__, _WHERE)
__all__ = sorted(_WHERE)
