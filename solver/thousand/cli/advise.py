"""`thousand advise RULES`: roll or stop, and which dice to keep, with the value of every option."""

from __future__ import annotations

import json

import click

from thousand.base.choices import OBJECTIVES, SEATS
from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.base.objectives import objective as objective_named
from thousand.rules.ruleset import Ruleset

from .options import (
    json_option,
    rules_argument,
    ruleset_of,
    set_option,
    tables_option,
)

__all__ = ["COUNTERS", "advise"]

COUNTERS = (
    ("bolts", "bolts"),
    ("falls", "barrel falls so far"),
    ("pit_tries", "failed turns in the current pit"),
    ("pit_entry", "score before entering the current pit"),
    ("barrel_tries", "failed turns on the barrel"),
    ("barrel_entry", "score before climbing the barrel"),
    ("overshoots", "overshoots of an exact barrel"),
)


def _counter_options(prefix: str):
    """Click options for the counters of ``--me`` (no prefix) or of the opponents
    (``--opp-...``, one value per ``--opp`` in the same order)."""
    p = f"--{prefix}-" if prefix else "--"
    dest = f"{prefix}_" if prefix else ""
    if prefix:
        opts = [
            click.option(
                f"{p}unopened",
                f"{dest}unopened",
                type=int,
                multiple=True,
                metavar="K",
                help="Opponent K (1 = the next to move) has not opened yet; repeat for several.",
            )
        ]
        opts += [
            click.option(
                f"{p}{name.replace('_', '-')}",
                f"{dest}{name}",
                type=int,
                multiple=True,
                help=f"The opponents' {what}, one per --opp in the same order (default 0).",
            )
            for name, what in COUNTERS
        ]
    else:
        opts = [
            click.option(
                "--unopened/--opened",
                "unopened",
                default=None,
                help="You have not opened yet / you have (default: not yet at score 0 where the rules ask an "
                "opening, else opened).",
            )
        ]
        opts += [
            click.option(
                f"--{name.replace('_', '-')}",
                name,
                type=int,
                default=None if name.endswith("entry") else 0,
                show_default=not name.endswith("entry"),
                help=f"Your {what}.",
            )
            for name, what in COUNTERS
        ]

    def deco(f):
        for o in reversed(opts):
            f = o(f)
        return f

    return deco


def _checked_roll(rs: Ruleset, x, turn_total: int, dice: int | None, roll_text: str | None):
    """The roll of ``--roll`` (None without one), after checking that the turn it is in
    can be reached from ``x``."""
    from thousand.engine.turn import TurnRules
    from thousand.rules.scoring import parse_roll

    roll = parse_roll(roll_text, rs) if roll_text is not None else None
    engine = TurnRules(rs)
    engine.check_reachable(engine.state(x, turn_total, dice, roll))
    return roll


def _player(rs: Ruleset, score: int, kw: dict):
    """The mover's state from ``--me`` and its counters, and a note where the opening was
    assumed: at 0 in rules with an opening minimum a player has not opened yet (as the
    scorekeeper knows), unless ``--opened`` says otherwise."""
    from thousand.engine.player import Moves, PlayerState

    g = kw.pop
    unopened = g("unopened")
    note = ""
    if unopened is None:
        unopened = score == 0 and rs.open_min > 0
        if unopened:
            note = _("taken as not yet open (at 0, the first bank needs {n} points); --opened says otherwise").format(
                n=rs.open_min
            )
    x = PlayerState(
        score,
        not unopened,
        g("bolts"),
        g("pit_tries"),
        g("pit_entry") or 0,
        g("barrel_tries"),
        g("barrel_entry") or 0,
        g("falls"),
        g("overshoots"),
    )
    return Moves(rs).check(x), note


def _opponents(rs: Ruleset, scores: tuple[int, ...], kw: dict) -> list:
    """The opponents' states from ``--opp`` (in the order they move next) and the
    ``--opp-...`` counters, matched by position."""
    from thousand.engine.player import Moves, PlayerState

    n = len(scores)
    per = {}
    for name, _what in COUNTERS:
        vals = kw.pop(f"opp_{name}")
        if len(vals) > n:
            raise StateError(
                _("--opp-{0} is given {1} times for {2} opponents (--opp)").format(name.replace("_", "-"), len(vals), n)
            )
        per[name] = list(vals) + [0] * (n - len(vals))
    unopened = set(kw.pop("opp_unopened"))
    if unopened - set(range(1, n + 1)):
        raise StateError(_("--opp-unopened K names opponent 1 to {0} (the order of --opp)").format(n))
    return [
        Moves(rs).check(
            PlayerState(
                s,
                k + 1 not in unopened,
                per["bolts"][k],
                per["pit_tries"][k],
                per["pit_entry"][k],
                per["barrel_tries"][k],
                per["barrel_entry"][k],
                per["falls"][k],
                per["overshoots"][k],
            )
        )
        for k, s in enumerate(scores)
    ]


@click.command()
@rules_argument
@set_option
@click.option(
    "--objective",
    type=click.Choice(OBJECTIVES),
    default=None,
    help="race: fewest expected turns alone; duel: win probability against --opp "
    "(default: duel when --opp is given, else race); rate: the most points per turn in "
    "the long run (--bolts: your zero turns in a row); turn: the most points this turn.",
)
@click.option("--me", "me", type=int, required=True, help="Your banked score.")
@_counter_options("")
@click.option(
    "--opp",
    "opp",
    type=int,
    multiple=True,
    help="An opponent's banked score (duel); repeat for each opponent of a game of three or more, "
    "in the order they move after you.",
)
@_counter_options("opp")
@click.option(
    "--seat",
    type=click.Choice(SEATS),
    default=None,
    help="equal_turns rulesets: your place in each round (first or second in a duel; up to sixth "
    "with more opponents); required there, an error elsewhere.",
)
@click.option(
    "--to-beat",
    "to_beat",
    type=int,
    default=None,
    metavar="F",
    help="equal_turns rulesets: a player has finished with F points (the top total) and this is your "
    "last turn of the round; --opp then gives the players still to play after you, if any.",
)
@click.option(
    "--tied", type=int, default=1, show_default=True, help="With --to-beat: how many players share the top total F."
)
@click.option(
    "--turn", "turn_total", type=int, default=0, show_default=True, help="Points of this turn so far (before --roll)."
)
@click.option("--dice", type=int, default=None, help="Dice you are about to roll (default: all).")
@click.option("--roll", "roll_text", default=None, metavar="FACES", help="The roll to set aside from, e.g. 1,5,5,2,3.")
@tables_option
@json_option
def advise(
    rules: str,
    overrides: tuple[str, ...],
    objective: str | None,
    me: int,
    opp: tuple[int, ...],
    seat: str | None,
    to_beat: int | None,
    tied: int,
    turn_total: int,
    dice: int | None,
    roll_text: str | None,
    tables_dir: str | None,
    as_json: bool,
    **kw,
) -> None:
    """Roll or stop, and which dice to keep, with the value of every option.

    With an equal_turns ruleset the duel needs your seat (--seat first|second);
    in the last turn of a round, after the first player finished with F, give
    --to-beat F instead of --opp (a tie counts 1/2). With two opponents or more
    (--opp S --opp S ..., in the order they move after you): the exact equilibrium
    where it exists or is cheap, else the best measured approximation, labelled.
    The same advice as the scorekeeper's and the web page's (thousand.advice)."""
    from thousand.advice.policy import Advisor, advice_json, advice_text
    from thousand.advice.situation import Situation
    from thousand.engine.player import Moves

    rs = ruleset_of(rules, overrides)
    if objective is not None and objective_named(objective).opponents and not opp and to_beat is None:
        raise StateError(_("the duel needs the opponent's score: --opp S"))
    alone = objective if objective is not None and not objective_named(objective).opponents else None
    _check_seat_options(rs, alone, seat, to_beat, tied, len(opp))
    x, opening_note = _player(rs, me, kw)
    ys = _opponents(rs, opp, kw)
    for y in ys:
        Moves(rs).check_pair(x, y)
    if alone == "rate" and ys:
        raise StateError(_("the rate is solitaire: it takes no --opp"))
    roll = _checked_roll(rs, x, turn_total, dice, roll_text)
    sit = Situation(
        rs,
        x,
        tuple(ys),
        seat=SEATS.index(seat) if seat else None,
        turn_total=turn_total,
        dice=dice,
        roll=roll,
        to_beat=to_beat,
        tied=tied,
    )
    parts = Advisor(rs, "auto", tables_dir).advise(sit, objective=alone)
    if opening_note:
        for part in parts:
            if part.advice is not None:
                part.advice.note = "; ".join(n for n in (opening_note, part.advice.note) if n)
    if as_json:
        main = next((p.advice for p in parts if p.advice is not None), None)
        data = {
            "ruleset": rs.name,
            "ruleset_hash": rs.hash,
            "players": sit.players,
            **({"to_beat": to_beat, "tied": tied} if to_beat is not None else {}),
            **(main.to_json() if main is not None else {}),
            "advice": advice_json(parts),
        }
        click.echo(json.dumps(data))
    else:
        click.echo(advice_text(parts))


def _check_seat_options(rs, alone: str | None, seat: str | None, to_beat: int | None, tied: int, opponents: int):
    """--seat, --to-beat and --tied only where they mean something."""
    if (seat or to_beat is not None) and not rs.equal_turns:
        raise StateError(
            _("--seat and --to-beat apply to equal_turns rulesets only; {name} ends at the first win").format(
                name=rs.name
            )
        )
    if alone is not None and (seat or to_beat is not None):
        raise StateError(_("--seat and --to-beat are for the duel; the race has no seats"))
    if to_beat is not None and seat:
        raise StateError(
            _(
                "--to-beat F is a last turn of the round: it takes no --seat (--opp: the players still "
                "to play after you)"
            )
        )
    if tied != 1 and to_beat is None:
        raise StateError(_("--tied K goes with --to-beat F"))
    if to_beat is not None or alone is not None or not opponents or not rs.equal_turns:
        return
    players = opponents + 1
    if seat is None:
        if players == 2:
            raise StateError(
                _("{name} plays equal turns: say which seat you move in, --seat first or --seat second").format(
                    name=rs.name
                )
            )
        raise StateError(
            _("{name} plays equal turns: say which seat you move in, --seat first, second, ... (of {n})").format(
                name=rs.name, n=players
            )
        )
    if SEATS.index(seat) >= players:
        if players == 2:
            raise StateError(_("--seat {seat}: a duel has the first and the second seat").format(seat=seat))
        raise StateError(
            _("--seat {seat}: a game of {n} players has seats first to {last}").format(
                seat=seat, n=players, last=SEATS[players - 1]
            )
        )
