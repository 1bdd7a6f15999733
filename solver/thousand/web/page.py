"""The page's files and words, shared by the server (:mod:`thousand.web.app`) and the static
app's build (:mod:`thousand.web.static_build`), which needs no web server to run."""

from __future__ import annotations

from pathlib import Path

from thousand.base.i18n import N_

__all__ = ["MAX_PLAYERS", "PAGE_WORDS", "STATIC"]

STATIC = Path(__file__).resolve().parent / "static"
MAX_PLAYERS = 6

# the page's own words, translated per request (one catalog for the page and the program)
PAGE_WORDS = {
    "title": N_("thousand — the dice game 1000"),
    "new_game": N_("New game"),
    "rules": N_("Rules"),
    "overrides": N_("Changes to the rules (key=value, one per line)"),
    "players": N_("Players"),
    "add_player": N_("Add a player"),
    "remove_player": N_("Remove"),
    "start": N_("Start"),
    "saved_games": N_("Saved games"),
    "open": N_("Open"),
    "delete": N_("Delete"),
    "no_games": N_("No saved games yet."),
    "roll": N_("Roll"),
    "roll_for_me": N_("Roll for me"),
    "clear": N_("Clear"),
    "stop": N_("Stop"),
    "undo": N_("Undo"),
    "advice": N_("Advice"),
    "review": N_("Review"),
    "share": N_("Play on other phones"),
    "share_hint": N_(
        "Open this link (or its QR code) on the other phones of the table: whoever has it can see and "
        "change this game, nobody else can."
    ),
    "review_title": N_("Review of the game"),
    "accuracy": N_("accuracy"),
    "per_decision": N_("given up per decision"),
    "decisions": N_("decisions"),
    "worst": N_("Worst decisions"),
    "instead_of": N_("instead of"),
    "no_mistakes": N_("No decision gave up more than 0.1 point of a win."),
    "save": N_("Save file"),
    "resume_file": N_("Resume from a file"),
    "sheet": N_("Score sheet"),
    "turn": N_("Turn"),
    "turn_total": N_("turn total"),
    "dice_to_roll": N_("dice to roll"),
    "tap_faces": N_("Tap the faces thrown"),
    "set_aside": N_("Set aside"),
    "solving": N_("Solving the table for this advice"),
    "seconds_left": N_("about {0} s left"),
    "how_found": N_("How this advice was found"),
    "offline": N_(
        "The server is away: the score sheet as this phone last saw it. Entries and advice wait until it is back."
    ),
    "server_away": N_("the server cannot be reached; try again when it is back"),
    "table_duel": N_("the exact two-player table"),
    "table_players": N_("the table of {0} players"),
    "build_exact": N_("Exact advice: build {0} (about {1} on the server)"),
    "building": N_("Building {0}"),
    "build_failed": N_("The build failed"),
    "time_left": N_("about {0} left; the advice above works meanwhile"),
    "longer_than_estimated": N_("taking longer than estimated"),
    "n_seconds": N_("{0} s"),
    "n_minutes": N_("{0} min"),
    "n_hours": N_("{0} h"),
    "build_hours": N_("hours of work for the server; the advice above works meanwhile"),
    "game_over": N_("Game over"),
    "games": N_("Games"),
    "player": N_("player"),
    "score": N_("score"),
    "status": N_("status"),
    "language": N_("Language"),
    "name_placeholder": N_("name"),
    # the page's own scorekeeper, with the server away (static/rules.js): the same words as
    # the server's sheet and refusals, and what happens to the entries kept on the phone
    "offline_scoring": N_(
        "The server is away: this phone keeps the score ({0} entries wait to be sent). Advice waits until it is back."
    ),
    "offline_entry": N_("{0} (kept on this phone)"),
    "synced": N_("{0} entries kept on this phone were sent to the server"),
    "sync_conflict": N_(
        "The game changed on the server while this phone was away; the entries kept here were not sent: {0}"
    ),
    "st_unopened": N_("unopened (needs {n})"),
    "st_pit": N_("in the pit from {low} to {exit}"),
    "st_tries": N_(" tries {n}/{limit}"),
    "st_barrel": N_("on the barrel"),
    "st_bolts": N_("bolts {n}/{limit}"),
    "st_falls": N_("falls {n}/{limit}"),
    "st_overshoots": N_("overshoots {n}/{limit}"),
    "st_finished": N_("finished with {total}"),
    "keep_label": N_("keep {dice} (+{points})"),
    "where_keep": N_("{name}: choose the dice to set aside from {roll}"),
    "where_over": N_("the game is over"),
    "where_roll": N_("{name} to play"),
    "where_turn": N_("{name}: turn total {t} — roll or stop"),
    "where_must": N_("{name}: turn total {t} — roll"),
    "h_bust": N_("bust"),
    "h_overshoot": N_("overshoot"),
    "h_win": N_("+{t} → {total} WIN"),
    "h_reached": N_("+{t} → {total} (reached {goal})"),
    "h_instant": N_("{roll} instant win"),
    "h_pushed": N_("pushed off the barrel"),
    "h_overtaken": N_("overtaken (−{n})"),
    "h_hit": N_("{what} by {name}: {a} → {b}"),
    "h_and": N_(" and "),
    "set_aside_first": N_("set dice aside from {roll} first"),
    "nothing_to_bank": N_("nothing to bank yet: a turn starts with a roll"),
    "hot_compulsory": N_("hot dice: rolling all {n} dice again is compulsory"),
    "not_opened": N_("not opened yet: the first bank needs at least {need} in one turn (have {t})"),
    "min_bank": N_("every bank needs at least {need} in one turn (have {t})"),
    "in_pit": N_("in the pit from {low} to {exit}: the bank must reach {exit} ({s} + {t} = {sum})"),
    "over_exact": N_("over {goal}: the open barrel needs exactly {goal}"),
    "on_barrel": N_("on the barrel: only a bank that reaches {goal} is allowed ({s} + {t} = {sum})"),
    "no_roll": N_("there is no roll to set dice aside from (roll first)"),
    "illegal_keep": N_("cannot set aside {kept} from {roll}: legal are {legal}"),
    "game_is_over": N_("the game is over (undo to change the last entry)"),
    "nothing_to_undo": N_("nothing to undo"),
    "authority_hint": N_(
        "Once per phone, so that the page installs and opens without the server: install the table's "
        "certificate (SHA-256 {0})."
    ),
    "wrong_dice": N_("roll {dice} dice, not {n}"),
    "bad_faces": N_("not a roll of this game: {roll}"),
    "bad_entry": N_("not an entry of the game: {entry}"),
    # the static app's (thousand web build), which answers the API on the phone
    "static_no_overrides": N_("this app plays the rules as they are: changes need `thousand serve`"),
    "static_no_game": N_("no such game on this phone"),
    "static_no_rules": N_("these rules are not in this app"),
    "static_ready": N_("Kept on this phone: the app keeps score, saves the games and advises with no network."),
}
