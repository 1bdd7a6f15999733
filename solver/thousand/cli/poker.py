"""`thousand solve|advise|evaluate poker ...`: the same verbs for poker dice (chosen by the main
group when RULES is a poker-dice ruleset; `play` takes both games)."""

from __future__ import annotations

import json
import time

import click

from thousand.base.errors import BotError, StateError
from thousand.base.i18n import _
from thousand.rules.poker import PokerRuleset

from .options import (
    check_counts,
    emit,
    json_option,
    rules_argument,
    ruleset_of,
    set_option,
    tables_option,
)

__all__ = ["players_option", "poker_advise", "poker_evaluate", "poker_solve"]

# `thousand solve|advise|evaluate poker ...`: the same verbs for the poker-dice ruleset kind
# (the group picks these when RULES is a poker-dice ruleset; `play` takes both games).

players_option = click.option(
    "--players", "players", type=int, default=2, show_default=True, help="Players in the game (2 to 8)."
)


def _say(line: str) -> None:
    click.echo(f"thousand: {line}", err=True)


def _hand(rs: PokerRuleset, text: str, what: str):

    try:
        return rs.parse_hand(text)
    except StateError as exc:
        raise StateError(_("{0}: {1}").format(what, exc)) from None


@click.command("solve")
@rules_argument
@set_option
@players_option
@click.option(
    "--reach",
    "reach",
    default=None,
    metavar="HAND",
    help="Solitaire: the chance of ending one turn with at least HAND (five dice, or four:6, "
    "full:6,2, ...), playing for it; no table.",
)
@tables_option
@click.option("--force", is_flag=True, help="Solve again and replace the stored table (atomically).")
@json_option
def poker_solve(rules, overrides, players, reach, tables_dir, force, as_json) -> None:
    """Poker dice: every seat's chance of winning with optimal play (or --reach HAND)."""
    rs = ruleset_of(rules, overrides, poker=True)
    t0 = time.perf_counter()
    if reach is not None:
        from thousand.solvers.poker_advice import reach_probability

        h = _hand(rs, reach, "--reach")
        p = reach_probability(rs, rs.hands.strength(h.dice))
        desc = rs.hands.describe(rs.hands.strength(h.dice))
        emit(
            {
                "ruleset": rs.name,
                "ruleset_hash": rs.hash,
                "objective": "reach",
                "hand": desc,
                "reach_probability": p,
                "seconds": round(time.perf_counter() - t0, 6),
            },
            as_json,
            f"{rs.name}: P(one turn ends with at least {desc}, playing for it) = {p:.12f}",
        )
        return
    from thousand.solvers.poker import MAX_PLAYERS
    from thousand.storage.poker import poker_solution

    if not 2 <= players <= MAX_PLAYERS:
        raise StateError(_("--players must be 2 to {0}, not {1}").format(MAX_PLAYERS, players))
    sol = poker_solution(rs, players, tables_dir, force=force, progress=_say)
    v = sol.seat_values[players]
    data = {
        "ruleset": rs.name,
        "ruleset_hash": rs.hash,
        "objective": "win",
        "players": players,
        "seat_values": [float(x) for x in v],
        "replay_probability": sol.replay.get(players),
        "residual": sol.residual.get(players),
        "rounds": sol.rounds.get(players),
        "solved_for": sol.players,
        "seconds": round(time.perf_counter() - t0, 6),
    }
    lines = [f"{rs.name}, {players} players: P(win) by seat with optimal play"]
    lines += [f"  seat {i + 1}: {x:.12f}" for i, x in enumerate(v)]
    if sol.replay.get(players) is not None:
        lines.append(
            f"  P(all {players} tie and replay) = {sol.replay[players]:.3e}; fixed point residual "
            f"{sol.residual[players]:.1e} after {sol.rounds[players]} rounds"
        )
    emit(data, as_json, "\n".join(lines))


@click.command("advise")
@rules_argument
@set_option
@click.option("--roll", "roll_text", required=True, metavar="FACES", help="The five dice showing, e.g. 6,6,3,2,1.")
@click.option(
    "--roll-number",
    "--throw",
    "throw",
    type=int,
    default=1,
    show_default=True,
    help="Which throw of the turn gave these dice (1 to the ruleset's rolls).",
)
@click.option(
    "--rerollable",
    "rerollable",
    default=None,
    metavar="FACES",
    help="The lock rule: the dice thrown at this throw, the only ones that may be re-rolled "
    "(required after throw 2 or later; default at throw 1: all).",
)
@click.option(
    "--to-beat",
    "to_beat",
    default=None,
    metavar="HAND",
    help="The best hand so far: five dice (6,6,6,2,2) or four:6, full:6,2, two-pairs:6,5, "
    "three:5, pair:4, five:3, straight:6 (omit it if you play first).",
)
@click.option("--holders", type=int, default=None, help="How many players hold that hand (a tie; default 1).")
@click.option(
    "--after",
    type=int,
    default=None,
    help="Players still to play after you (default 0 with --to-beat; required without it).",
)
@click.option(
    "--reach",
    "reach",
    default=None,
    metavar="HAND",
    help="Solitaire instead: maximise the chance of ending with at least HAND.",
)
@tables_option
@json_option
def poker_advise(
    rules, overrides, roll_text, throw, rerollable, to_beat, holders, after, reach, tables_dir, as_json
) -> None:
    """Poker dice: stop, or which dice to re-roll, with P(win) for every option."""
    from thousand.rules.poker import parse_dice
    from thousand.solvers.poker import situation_of
    from thousand.solvers.poker_advice import advise, advise_reach, turn_state
    from thousand.storage.poker import poker_solution

    rs = ruleset_of(rules, overrides, poker=True)
    dice = parse_dice(roll_text, None)
    free = parse_dice(rerollable, None) if rerollable else None
    st = turn_state(rs, dice, throw, free)
    if reach is not None:
        if to_beat is not None or holders is not None or after is not None:
            raise StateError(_("--reach is solitaire: it takes no --to-beat, --holders or --after"))
        h = _hand(rs, reach, "--reach")
        adv = advise_reach(rs, rs.hands.strength(h.dice), st)
    else:
        if to_beat is None and after is None:
            raise StateError(_("say how many play after you (--after N), or the hand to beat (--to-beat HAND)"))
        beat = _hand(rs, to_beat, "--to-beat") if to_beat is not None else None
        sit = situation_of(rs, beat, holders, after or 0)
        adv = advise(rs, poker_solution(rs, max(2, sit.players), tables_dir, progress=_say), sit, st)
    if as_json:
        click.echo(json.dumps(adv.to_json()))
    else:
        click.echo(adv.render())


@click.command("evaluate")
@rules_argument
@set_option
@click.option(
    "--bot",
    "bot_spec",
    required=True,
    metavar="SPEC",
    help="optimal, stop, greedy, random[:SEED], exec:COMMAND (JSON lines), module:attr or path/to/file.py:attr.",
)
@players_option
@click.option(
    "--games", type=int, default=2000, show_default=True, help="Monte Carlo games with the bot in each seat (0: none)."
)
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the dice (and of random bots).")
@click.option(
    "--exact/--no-exact",
    default=True,
    show_default=True,
    help="Evaluate exactly (asking the bot at every turn state its play reaches).",
)
@click.option("--budget", type=int, default=None, help="Most decisions the exact evaluation asks the bot.")
@click.option("--worst", type=int, default=5, show_default=True, help="Worst decisions to list.")
@click.option(
    "--timeout", type=float, default=2.0, show_default=True, help="Seconds a Python or exec: bot has for each decision."
)
@tables_option
@json_option
def poker_evaluate(
    rules, overrides, bot_spec, players, games, seed, exact, budget, worst, timeout, tables_dir, as_json
) -> None:
    """Poker dice: a bot's chance in each seat against optimal players, and its worst decisions."""
    from thousand.analysis.poker_evaluate import EXACT_BUDGET, evaluate_poker
    from thousand.solvers.poker import MAX_PLAYERS
    from thousand.storage.poker import poker_solution

    rs = ruleset_of(rules, overrides, poker=True)
    budget = EXACT_BUDGET if budget is None else budget
    check_counts(("--games", games), ("--budget", budget), ("--worst", worst))
    if not timeout > 0:
        raise BotError(_("--timeout must be positive"))
    if not 2 <= players <= MAX_PLAYERS:
        raise BotError(_("--players must be 2 to {0}, not {1}").format(MAX_PLAYERS, players))
    sol = poker_solution(rs, players, tables_dir, progress=_say)
    report = evaluate_poker(rs, sol, bot_spec, players, games, seed, exact, budget, worst, timeout)
    emit(report["json"], as_json, report["text"])
