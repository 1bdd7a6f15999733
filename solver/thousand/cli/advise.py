"""`thousand advise RULES`: roll or stop, and which dice to keep, with the value of every option."""

from __future__ import annotations

import json

import click

from thousand.base.choices import SEATS
from thousand.base.errors import StateError
from thousand.base.i18n import _
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
        opts = [click.option("--unopened", "unopened", is_flag=True, help="You have not opened yet.")]
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
    """The mover's state from ``--me`` and its counters."""
    from thousand.engine.player import Moves, PlayerState

    g = kw.pop
    x = PlayerState(
        score,
        not g("unopened"),
        g("bolts"),
        g("pit_tries"),
        g("pit_entry") or 0,
        g("barrel_tries"),
        g("barrel_entry") or 0,
        g("falls"),
        g("overshoots"),
    )
    return Moves(rs).check(x)


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
    type=click.Choice(("race", "duel", "rate")),
    default=None,
    help="race: fewest expected turns alone; duel: win probability against --opp "
    "(default: duel when --opp is given, else race); rate: the most points per turn in "
    "the long run (--me-bolts: your zero turns in a row).",
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
    where it exists or is cheap, else the best measured approximation, labelled."""
    from thousand.engine.player import Moves

    rs = ruleset_of(rules, overrides)
    objective = objective or ("duel" if opp or to_beat is not None else "race")
    _check_seat_options(rs, objective, seat, to_beat, tied)
    x = _player(rs, me, kw)
    ys = _opponents(rs, opp, kw)
    for y in ys:
        Moves(rs).check_pair(x, y)
    if to_beat is not None:
        roll = _checked_roll(rs, x, turn_total, dice, roll_text)
        _advise_last_turn(rs, x, ys, to_beat, tied, turn_total, dice, roll, as_json)
    elif len(ys) > 1 and objective == "duel":
        seat_i = _seat_of_several(rs, seat, len(ys) + 1)
        roll = _checked_roll(rs, x, turn_total, dice, roll_text)
        _advise_several(rs, x, ys, seat_i, turn_total, dice, roll, tables_dir, as_json)
    else:
        y = ys[0] if ys else None
        _check_duel_seat(rs, objective, y, seat)
        roll = _checked_roll(rs, x, turn_total, dice, roll_text)
        adv = _advice_of_one(rs, objective, x, y, seat, turn_total, dice, roll, tables_dir, opp)
        if as_json:
            click.echo(json.dumps({"ruleset": rs.name, "ruleset_hash": rs.hash, **adv.to_json()}))
        else:
            click.echo(adv.render())


def _check_seat_options(rs, objective: str, seat: str | None, to_beat: int | None, tied: int) -> None:
    """--seat, --to-beat and --tied only where they mean something."""
    if (seat or to_beat is not None) and not rs.equal_turns:
        raise StateError(
            _("--seat and --to-beat apply to equal_turns rulesets only; {name} ends at the first win").format(
                name=rs.name
            )
        )
    if objective == "race" and (seat or to_beat is not None):
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


def _check_duel_seat(rs, objective: str, y, seat: str | None) -> None:
    """A duel needs the opponent, and with equal turns the seat (first or second)."""
    if objective == "duel" and y is None:
        raise StateError(_("the duel needs the opponent's score: --opp S"))
    if seat and SEATS.index(seat) > 1:
        raise StateError(_("--seat {seat}: a duel has the first and the second seat").format(seat=seat))
    if objective == "duel" and rs.equal_turns and seat is None:
        raise StateError(
            _("{name} plays equal turns: say which seat you move in, --seat first or --seat second").format(
                name=rs.name
            )
        )


def _seat_of_several(rs, seat: str | None, players: int) -> int | None:
    """The mover's seat among ``players`` (equal turns only; None otherwise)."""
    if not rs.equal_turns:
        return None
    if seat is None:
        raise StateError(
            _("{name} plays equal turns: say which seat you move in, --seat first, second, ... (of {n})").format(
                name=rs.name, n=players
            )
        )
    seat_i = SEATS.index(seat)
    if seat_i >= players:
        raise StateError(
            _("--seat {seat}: a game of {n} players has seats first to {last}").format(
                seat=seat, n=players, last=SEATS[players - 1]
            )
        )
    return seat_i


def _advise_last_turn(rs, x, ys, to_beat: int, tied: int, turn_total, dice, roll, as_json: bool) -> None:
    """The last turn of an equal-turns round against a finished total (exact, no table)."""
    from thousand.solvers.advice import last_turn_advisor

    label = "; ".join(
        [_("you: {me}; last turn against a finished total of {total}").format(me=x.describe(rs), total=to_beat)]
        + [_("still to play {k}: {opp}").format(k=k + 1, opp=o.describe(rs)) for k, o in enumerate(ys)]
    )
    adv = last_turn_advisor(rs, to_beat, tied, ys).advise(x, turn_total, dice, roll, state_label=label)
    tie = _("a tie counts 1/2") if not ys and tied == 1 else _("a tie at the top among k players is worth 1/k")
    adv.note = "; ".join(n for n in (adv.note, tie) if n)
    if as_json:
        data = {"ruleset": rs.name, "ruleset_hash": rs.hash, "to_beat": to_beat, "tied": tied, **adv.to_json()}
        click.echo(json.dumps(data))
    else:
        click.echo(adv.render())


def _advise_several(rs, x, ys, seat_i, turn_total, dice, roll, tables_dir, as_json: bool) -> None:
    """Three players or more: the equilibrium where it exists or is cheap, else the best
    measured approximation, labelled (the scorekeeper's advisors)."""
    from thousand.play.game import Advisors, advice_json, advice_text

    label = "; ".join(
        [_("you: {me}").format(me=x.describe(rs))]
        + [_("opponent {k}: {opp}").format(k=k + 1, opp=o.describe(rs)) for k, o in enumerate(ys)]
    )
    parts = Advisors(rs, "auto", tables_dir).several(x, ys, turn_total, dice, roll, label, seat=seat_i)
    if as_json:
        data = {"ruleset": rs.name, "ruleset_hash": rs.hash, "players": len(ys) + 1, "advice": advice_json(parts)}
        click.echo(json.dumps(data))
    else:
        click.echo(advice_text(parts))


def _advice_of_one(rs, objective: str, x, y, seat, turn_total, dice, roll, tables_dir, opp):
    """One player's advice by the rate, the duel against one opponent, or the race alone."""
    from thousand.solvers.advice import race_advisor
    from thousand.tables.solve import solve_objective

    if objective == "rate":
        return _rate_advice(rs, x, y, turn_total, dice, roll)
    if objective == "duel":
        return _duel_advice(rs, x, y, seat, turn_total, dice, roll, tables_dir)
    adv = race_advisor(solve_objective(rs, objective, tables_dir, progress=True)).advise(x, turn_total, dice, roll)
    if opp is None:
        solitaire = _(
            "solitaire: the fewest expected turns to win alone (give --opp S for the win probability against "
            "an opponent)"
        )
        adv.note = "; ".join(n for n in (solitaire, adv.note) if n)
    return adv


def _rate_advice(rs, x, y, turn_total, dice, roll):
    from thousand.solvers.advice import rate_advisor
    from thousand.solvers.rate import solve_rate

    if y is not None:
        raise StateError(_("the rate is solitaire: it takes no --opp"))
    rate = solve_rate(rs)
    adv = rate_advisor(rate).advise(x, turn_total, dice, roll, state_label=_("you: {me}").format(me=x.describe(rs)))
    gain = _(
        "long run: {gain} points per turn; an option's value is its points plus the relative value of "
        "the counter it leaves"
    ).format(gain=f"{rate.gain:.4f}")
    adv.note = "; ".join(n for n in (gain, adv.note) if n)
    return adv


def _duel_advice(rs, x, y, seat, turn_total, dice, roll, tables_dir):
    """The duel's exact advice, or where its table does not fit, the measured
    memoryless-opponent approximation, labelled."""
    from thousand.solvers.advice import duel_advisor
    from thousand.tables.solve import DuelTooLarge, note_rounding, solve_objective

    label = _("you: {me}; opponent: {opp}").format(me=x.describe(rs), opp=y.describe(rs))
    if seat:
        label = _("you ({seat} seat): {me}; opponent: {opp}").format(
            seat=_(seat), me=x.describe(rs), opp=y.describe(rs)
        )
    seat_i = ("first", "second").index(seat) if seat else None
    try:
        sol = solve_objective(rs, "duel", tables_dir, progress=True)
    except DuelTooLarge as too_large:
        from thousand.solvers.geometric import approximation_note
        from thousand.tables.geometric import geometric_duel

        adv = duel_advisor(geometric_duel(rs, tables_dir), y, seat_i, "estimated_win_probability").advise(
            x, turn_total, dice, roll, state_label=label
        )
        adv.note = "; ".join(n for n in (approximation_note(str(too_large)), adv.note) if n)
        return adv
    return note_rounding(sol, duel_advisor(sol, y, seat_i).advise(x, turn_total, dice, roll, state_label=label))
