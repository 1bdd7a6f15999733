"""The ``thousand`` command line: rules, solve, advise.

Results go to stdout (``--json`` for machines), progress and errors to stderr.
Bad input is one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import json
import sys
import time

import click

from . import __version__, kernel
from .errors import ThousandError
from .rules import Ruleset, load_ruleset, preset_names

OBJECTIVES = ("turn", "race", "duel")


# click >= 8.2 raises this for a group called without a command; older clicks print the help
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Group(click.Group):
    """A click group that turns every :class:`ThousandError`, and click's own usage
    errors (a bad option value, a missing argument), into one line and exit 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except _NO_ARGS_IS_HELP as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.ClickException as exc:
            click.echo(f"thousand: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("thousand: interrupted", err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ThousandError as exc:
            click.echo(f"thousand: error: {exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("thousand: interrupted", err=True)
            ctx.exit(130)


def _emit(data: dict, as_json: bool, human: str) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=None, sort_keys=False))
    else:
        click.echo(human)


rules_argument = click.argument("rules", metavar="RULES")
set_option = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                          help="Override a ruleset key (dotted keys, TOML values); repeatable.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")


def _ruleset(rules: str, overrides: tuple[str, ...]) -> Ruleset:
    return load_ruleset(rules, overrides)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="thousand")
def main() -> None:
    """Exact optimal play for the dice game 1000 (Тысяча) and its family.

    RULES is a preset name (see `thousand rules list`) or a path to a TOML file.
    """


# --------------------------------------------------------------------------- rules


@main.group(cls=_Group)
def rules() -> None:
    """List, show and check rulesets."""


@rules.command("list")
@json_option
def rules_list(as_json: bool) -> None:
    """Every preset with a one-line summary."""
    items = []
    for name in preset_names():
        rs = load_ruleset(name)
        items.append({"name": name, "summary": rs.summary, "hash": rs.hash})
    width = max(len(i["name"]) for i in items)
    _emit({"presets": items}, as_json,
          "\n".join(f"{i['name']:<{width}}  {i['summary']}" for i in items))


@rules.command("show")
@rules_argument
@set_option
def rules_show(rules: str, overrides: tuple[str, ...]) -> None:
    """The fully resolved ruleset as TOML (it loads back to the same hash)."""
    rs = _ruleset(rules, overrides)
    click.echo(f"# ruleset hash {rs.hash}, unit {rs.unit} points")
    click.echo(rs.to_toml(), nl=False)


# --------------------------------------------------------------------------- solve


@main.command()
@rules_argument
@set_option
@click.option("--objective", type=click.Choice(OBJECTIVES), default="duel", show_default=True,
              help="turn: expected points of one turn; race: fewest expected turns alone; "
                   "duel: two-player win probability.")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), envvar="THOUSAND_TABLES",
              help="Tables directory (default: the repository's tables/, then the user cache).")
@click.option("--force", is_flag=True, help="Solve again and replace the stored table (atomically).")
@json_option
def solve(rules: str, overrides: tuple[str, ...], objective: str, tables_dir: str | None,
          force: bool, as_json: bool) -> None:
    """Solve a ruleset for an objective and print the value of the initial state."""
    rs = _ruleset(rules, overrides)
    t0 = time.perf_counter()
    if objective == "turn":
        from .turn import expected_turn_points
        value, _, T = expected_turn_points(rs)
        secs = time.perf_counter() - t0
        data = {"ruleset": rs.name, "ruleset_hash": rs.hash, "objective": "turn",
                "start_value": value, "unit": rs.unit, "horizon_units": T,
                "kernel": kernel.IMPLEMENTATION, "seconds": round(secs, 6)}
        _emit(data, as_json,
              f"{rs.name}: the best expected score of one turn from the start is "
              f"{value:.6f} points ({kernel.IMPLEMENTATION} kernel, {secs:.3f} s)")
        return
    from .solve import solve_objective
    res = solve_objective(rs, objective, tables_dir, progress=True, force=force)
    data = {"ruleset": rs.name, "ruleset_hash": rs.hash, "objective": objective}
    data.update(res.summary())
    data["seconds"] = round(time.perf_counter() - t0, 6)
    _emit(data, as_json, res.describe(rs))


# --------------------------------------------------------------------------- advise


def _counter_options(prefix: str, who: str):
    """Click options for one player's score and counters (``--me``/``--opp``)."""
    p = f"--{prefix}-" if prefix else "--"
    dest = f"{prefix}_" if prefix else ""
    opts = [
        click.option(f"{p}unopened", f"{dest}unopened", is_flag=True, help=f"{who} has not opened yet."),
        click.option(f"{p}bolts", f"{dest}bolts", type=int, default=0, show_default=True, help=f"{who}'s bolts."),
        click.option(f"{p}falls", f"{dest}falls", type=int, default=0, help=f"{who}'s barrel falls so far."),
        click.option(f"{p}pit-tries", f"{dest}pit_tries", type=int, default=0,
                     help=f"{who}'s failed turns in the current pit."),
        click.option(f"{p}pit-entry", f"{dest}pit_entry", type=int, default=None,
                     help=f"{who}'s score before entering the current pit."),
        click.option(f"{p}barrel-tries", f"{dest}barrel_tries", type=int, default=0,
                     help=f"{who}'s failed turns on the barrel."),
        click.option(f"{p}barrel-entry", f"{dest}barrel_entry", type=int, default=None,
                     help=f"{who}'s score before climbing the barrel."),
        click.option(f"{p}overshoots", f"{dest}overshoots", type=int, default=0,
                     help=f"{who}'s overshoots of an exact barrel."),
    ]

    def deco(f):
        for o in reversed(opts):
            f = o(f)
        return f
    return deco


def _player(rs: Ruleset, score: int, kw: dict, prefix: str = ""):
    from .game import Moves, PlayerState
    g = lambda k: kw.pop(f"{prefix}_{k}" if prefix else k)  # noqa: E731
    x = PlayerState(score, not g("unopened"), g("bolts"), g("pit_tries"), g("pit_entry") or 0,
                    g("barrel_tries"), g("barrel_entry") or 0, g("falls"), g("overshoots"))
    return Moves(rs).check(x)


@main.command()
@rules_argument
@set_option
@click.option("--objective", type=click.Choice(("race", "duel")), default=None,
              help="race: fewest expected turns alone; duel: win probability against --opp "
                   "(default: duel when --opp is given, else race).")
@click.option("--me", "me", type=int, required=True, help="Your banked score.")
@_counter_options("", "You")
@click.option("--opp", "opp", type=int, default=None, help="The opponent's banked score (duel).")
@_counter_options("opp", "The opponent")
@click.option("--seat", type=click.Choice(("first", "second")), default=None,
              help="equal_turns rulesets (duel): whether you move first or second in each round; required "
                   "there, an error elsewhere.")
@click.option("--to-beat", "to_beat", type=int, default=None, metavar="F",
              help="equal_turns rulesets: the first player has finished with F points and this is your "
                   "last turn (you are the second seat; replaces --opp).")
@click.option("--turn", "turn_total", type=int, default=0, show_default=True,
              help="Points of this turn so far (before --roll).")
@click.option("--dice", type=int, default=None, help="Dice you are about to roll (default: all).")
@click.option("--roll", "roll_text", default=None, metavar="FACES",
              help="The roll to set aside from, e.g. 1,5,5,2,3.")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), envvar="THOUSAND_TABLES",
              help="Tables directory.")
@json_option
def advise(rules: str, overrides: tuple[str, ...], objective: str | None, me: int, opp: int | None,
           seat: str | None, to_beat: int | None, turn_total: int,
           dice: int | None, roll_text: str | None, tables_dir: str | None, as_json: bool, **kw) -> None:
    """Roll or stop, and which dice to keep, with the value of every option.

    With an equal_turns ruleset the duel needs your seat (--seat first|second);
    in the last turn of a round, after the first player finished with F, give
    --to-beat F instead of --opp (a tie counts 1/2)."""
    from .advisor import duel_advisor, last_turn_advisor, race_advisor
    from .errors import StateError
    from .scoring import parse_roll
    from .solve import solve_objective
    rs = _ruleset(rules, overrides)
    objective = objective or ("duel" if opp is not None or to_beat is not None else "race")
    if (seat or to_beat is not None) and not rs.equal_turns:
        raise StateError(f"--seat and --to-beat apply to equal_turns rulesets only; {rs.name} ends at the "
                         "first win")
    if objective == "race" and (seat or to_beat is not None):
        raise StateError("--seat and --to-beat are for the duel; the race has no seats")
    if to_beat is not None and (seat == "first" or opp is not None):
        raise StateError("--to-beat F is the second player's last turn: it takes neither --seat first nor --opp")
    x = _player(rs, me, kw)
    y = _player(rs, opp, kw, "opp") if opp is not None else None
    if objective == "duel" and y is None and to_beat is None:
        raise StateError("the duel needs the opponent's score: --opp S")
    if objective == "duel" and rs.equal_turns and seat is None and to_beat is None:
        raise StateError(f"{rs.name} plays equal turns: say which seat you move in, --seat first or "
                         "--seat second")
    roll = parse_roll(roll_text, rs) if roll_text is not None else None
    if to_beat is not None:
        label = f"you: {x.describe(rs)}; last turn (second seat) against a finished total of {to_beat}"
        adv = last_turn_advisor(rs, to_beat).advise(x, turn_total, dice, roll, state_label=label)
        adv.note = "; ".join(n for n in (adv.note, "a tie counts 1/2") if n)
        if as_json:
            click.echo(json.dumps({"ruleset": rs.name, "ruleset_hash": rs.hash, "to_beat": to_beat,
                                   **adv.to_json()}))
        else:
            click.echo(adv.render())
        return
    solution = solve_objective(rs, objective, tables_dir, progress=True)
    if objective == "duel":
        label = f"you: {x.describe(rs)}; opponent: {y.describe(rs)}"
        if seat:
            label = f"you ({seat} seat): {x.describe(rs)}; opponent: {y.describe(rs)}"
        adv = duel_advisor(solution, y, ("first", "second").index(seat) if seat else None).advise(
            x, turn_total, dice, roll, state_label=label)
    else:
        adv = race_advisor(solution).advise(x, turn_total, dice, roll)
    if as_json:
        click.echo(json.dumps({"ruleset": rs.name, "ruleset_hash": rs.hash, **adv.to_json()}))
    else:
        click.echo(adv.render())


# --------------------------------------------------------------------------- evaluate (bots)
# registered here: the command lives in its own module
from .evaluate import evaluate  # noqa: E402
main.add_command(evaluate)

# --------------------------------------------------------------------------- play and chart
# registered here: the commands live in their own modules
from .play import play  # noqa: E402
from .chart import chart  # noqa: E402

main.add_command(play)
main.add_command(chart)


if __name__ == "__main__":  # pragma: no cover
    main()
