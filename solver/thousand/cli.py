"""The ``thousand`` command line: rules, solve, advise, evaluate, play, chart.

The only module that knows click: every command parses its options here and calls
the module that does the job. Results go to stdout (``--json`` for machines),
progress and errors to stderr. Bad input is one line on stderr and exit code 2,
never a traceback.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from thousand.base.choices import ADVICE_MODES, CHART_KINDS, EXACT_BUDGET, OBJECTIVES, REVIEW_OBJECTIVES, SEATS
from thousand.base.errors import RulesetError, StateError, ThousandError
from thousand.base.i18n import LANGUAGES, _, using
from thousand.base.version import __version__
from thousand.rules.poker import PokerRuleset
from thousand.rules.ruleset import Ruleset, load_ruleset, preset_names

# click >= 8.2 raises this for a group called without a command; older clicks print the help
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Group(click.Group):
    """A click group that turns every :class:`ThousandError`, and click's own usage
    errors (a bad option value, a missing argument), into one line and exit 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            args, lang = _take_language(args)
        except ValueError as exc:
            _fail(exc)
            sys.exit(2)
        # the language holds for this call only (one process may run several: tests, a server)
        with using(lang):
            return self._main(args, prog_name, complete_var, standalone_mode, **extra)

    def _main(self, args, prog_name, complete_var, standalone_mode, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except _NO_ARGS_IS_HELP as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.ClickException as exc:
            _fail(exc.format_message())
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo(_("thousand: interrupted"), err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)

    def resolve_command(self, ctx, args):
        # one verb, two games: `thousand advise poker ...` is the poker-dice command of the
        # same name (its own options); the ruleset is the first argument that is not an option
        name, cmd, rest = super().resolve_command(ctx, args)
        twin = POKER_COMMANDS.get(name) if self is main else None
        if twin is not None:
            first = next((a for a in rest if not a.startswith("-")), None)
            if first is not None and _names_poker(first):
                return name, twin, rest
        return name, cmd, rest

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ThousandError as exc:
            _fail(exc)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo(_("thousand: interrupted"), err=True)
            ctx.exit(130)


def _fail(message: object) -> None:
    """The one line on stderr that every refusal is: its message on one line, a long input
    quoted in it cut short (a 10,000-face roll is not echoed whole)."""
    from thousand.base.untrusted import cut

    click.echo(_("thousand: error: {message}").format(message=cut(message, 600)), err=True)


MAX_COUNT = 10**8  # games, states or decisions asked for: more would run for days, not finish


def _check_counts(*named: tuple[str, int]) -> None:
    """Each count given on the command line from 0 to :data:`MAX_COUNT` (one line otherwise)."""
    from thousand.base.errors import BotError

    for name, v in named:
        if v < 0:
            raise BotError(_("{0} must be 0 or more").format(name))
        if v > MAX_COUNT:
            raise BotError(_("{0} must be at most {1:,} (that many would run for days)").format(name, MAX_COUNT))


def _take_language(args: list[str]) -> tuple[list[str], str | None]:
    """``--lang L`` (or ``--lang=L``) wherever it stands on the command line, before or after
    the command: (the other arguments, L or None). ValueError for an unknown language."""
    out, k, lang = [], 0, None
    while k < len(args):
        a = args[k]
        if a == "--":
            out.extend(args[k:])
            break
        if a == "--lang" or a.startswith("--lang="):
            if a == "--lang":
                if k + 1 >= len(args):
                    raise ValueError("--lang needs a language: en or ru")
                value, k = args[k + 1], k + 2
            else:
                value, k = a.split("=", 1)[1], k + 1
            if value not in LANGUAGES:
                raise ValueError(f"unknown language {value!r}: one of {', '.join(LANGUAGES)}")
            lang = value
            continue
        out.append(a)
        k += 1
    return out, lang


def _emit(data: dict, as_json: bool, human: str) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=None, sort_keys=False))
    else:
        click.echo(human)


class _OutputFile(click.ParamType):
    """A file the command writes: checked when the command line is read, before any work,
    so that a missing folder is one line at once, not after a long search (no folder is
    created on the user's behalf)."""

    name = "file"

    def convert(self, value, param, ctx):
        from thousand.base.untrusted import InputError, output_file

        try:
            return str(output_file(value, _("file")))
        except InputError as exc:
            self.fail(str(exc), param, ctx)


OUTPUT_FILE = _OutputFile()

# options that several commands share, declared once
rules_argument = click.argument("rules", metavar="RULES")
set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a ruleset key (dotted keys, TOML values); repeatable.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
tables_option = click.option(
    "--tables",
    "tables_dir",
    type=click.Path(file_okay=False),
    envvar="THOUSAND_TABLES",
    help="Tables directory (default: the shipped tables, then the user cache).",
)


def _ruleset(rules: str, overrides: tuple[str, ...], poker: bool = False) -> Ruleset:
    """The ruleset of a command; a poker-dice ruleset only where the command takes one."""
    rs = load_ruleset(rules, overrides)
    if isinstance(rs, PokerRuleset) and not poker:
        command = click.get_current_context().info_name
        raise RulesetError(
            _(
                "{0} is a poker-dice ruleset: `thousand {1}` is for the 1000 family (poker dice "
                "has rules, solve, advise, play and evaluate)"
            ).format(rules, command)
        )
    return rs


def _names_poker(spec: str) -> bool:
    """Whether a RULES argument names a poker-dice ruleset (a preset or a TOML file)."""
    from pathlib import Path

    from thousand.base.untrusted import load_toml
    from thousand.rules.ruleset import _preset_text

    try:
        text = _preset_text(spec) if "/" not in spec and not spec.endswith(".toml") else None
        if text is None and spec.endswith(".toml") and Path(spec).is_file():
            text = Path(spec).read_text(encoding="utf-8")
        return text is not None and load_toml(text).get("game") == "poker"
    except (OSError, ValueError):  # InputError and UnicodeDecodeError are ValueErrors
        return False  # the command itself reports a broken file


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="thousand")
@click.option(
    "--lang",
    type=click.Choice(LANGUAGES),
    expose_value=False,
    help="Language of advice, the scorekeeper and errors (default: THOUSAND_LANG, then the locale); "
    "also accepted after the command.",
)
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
        items.append({"name": name, "summary": rs.summary, "hash": rs.hash, "game": getattr(rs, "game", "1000")})
    width = max(len(i["name"]) for i in items)
    _emit({"presets": items}, as_json, "\n".join(f"{i['name']:<{width}}  {i['summary']}" for i in items))


@rules.command("show")
@rules_argument
@set_option
@json_option
def rules_show(rules: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """The fully resolved ruleset as TOML (it loads back to the same hash)."""
    rs = _ruleset(rules, overrides, poker=True)
    unit = getattr(rs, "unit", None)
    if as_json:
        click.echo(json.dumps({"name": rs.name, "hash": rs.hash, "unit": unit, "ruleset": rs.to_mapping()}))
        return
    click.echo(f"# ruleset hash {rs.hash}" + (f", unit {unit} points" if unit else ", poker dice"))
    click.echo(rs.to_toml(), nl=False)


@rules.command("check")
@rules_argument
@set_option
@json_option
def rules_check(rules: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """Check a ruleset (a TOML file or a preset with overrides): one line, its hash."""
    rs = _ruleset(rules, overrides, poker=True)
    unit = getattr(rs, "unit", None)
    _emit(
        {"ok": True, "name": rs.name, "hash": rs.hash, "unit": unit},
        as_json,
        f"{rules}: a valid ruleset ({rs.name}, hash {rs.hash}, " + (f"unit {unit} points)" if unit else "poker dice)"),
    )


# --------------------------------------------------------------------------- tables


@main.group(cls=_Group)
def tables() -> None:
    """List, verify and clean stored tables."""


@tables.command("list")
@tables_option
@json_option
def tables_list(tables_dir: str | None, as_json: bool) -> None:
    """Every stored table on the search path, with its ruleset, objective, size and state."""
    from thousand.tables.files import leftovers, search_path, stored_tables

    found = stored_tables(tables_dir)
    lines = [
        f"{t.where:8} {t.ruleset:18} {t.objective:5} {t.bytes / 2**20:8.1f} MB {t.encoding:7}  "
        f"{'ok' if not t.problem else 'BAD: ' + t.problem}  {t.path}"
        for t in found
    ]
    left = [x for root in search_path(tables_dir) for x in leftovers(root)]
    if left:
        lines.append(
            f"{len(left)} unfinished writes of interrupted solves ({sum(x.bytes for x in left) / 2**20:.1f} MB): "
            "thousand tables clean removes them"
        )
    _emit(
        {"tables": [t.to_json() for t in found], "unfinished_writes": [str(x.path) for x in left]},
        as_json,
        "\n".join(lines) or "no stored tables",
    )


@tables.command("verify")
@tables_option
@json_option
def tables_verify(tables_dir: str | None, as_json: bool) -> None:
    """Check every stored table (checksums, ruleset, format, ranges); exit 2 if one fails."""
    from thousand.tables.files import stored_tables

    found = stored_tables(tables_dir)
    bad = [t for t in found if t.problem]
    _emit(
        {"checked": len(found), "bad": [t.to_json() for t in bad]},
        as_json,
        "\n".join([f"BAD {t.path}: {t.problem}" for t in bad] + [f"{len(found)} tables checked, {len(bad)} bad"]),
    )
    if bad:
        sys.exit(2)


@tables.command("round")
@rules_argument
@set_option
@click.option(
    "--to",
    "to_dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Tables directory to write the fixed-point table to (e.g. the repository's tables/).",
)
@tables_option
@json_option
def tables_round(rules: str, overrides: tuple[str, ...], to_dir: str, tables_dir: str | None, as_json: bool) -> None:
    """Store the exact duel table of RULES (found on the search path) in 32-bit fixed point
    under --to: half the size, every value within 1.2e-10 (how the largest shipped tables
    are made from a solve)."""
    from pathlib import Path

    import numpy as np

    from thousand.base.errors import StateError
    from thousand.tables.files import FIXED32, find_table, load_table, save_table

    rs = _ruleset(rules, overrides)
    table = find_table(rs, "duel", tables_dir)
    if table is None or not table.exact:
        raise StateError(
            _(
                "no exact duel table of {0} on the search path: solve it first with `thousand solve {0} "
                "--objective duel`"
            ).format(rs.name)
        )
    folder = save_table(
        Path(to_dir),
        rs,
        "duel",
        np.asarray(table.values),
        table.states,
        {**table.meta, "rounded_from": str(table.path)},
        FIXED32,
    )
    err = load_table(folder, rs, "duel").encoding_error
    _emit(
        {"table": str(folder), "from": str(table.path), "encoding_error": err},
        as_json,
        f"{folder}: {rs.name} duel in fixed point, within {err:.1e} of {table.path}",
    )


@tables.command("clean")
@tables_option
@click.option("--all", "everything", is_flag=True, help="Remove every cached table, not only the bad ones.")
@json_option
def tables_clean(tables_dir: str | None, everything: bool, as_json: bool) -> None:
    """Remove bad tables (or, with --all, every table) from the user cache or --tables, and
    the unfinished writes of interrupted solves; says how much it freed. Shipped tables are
    never touched."""
    import shutil

    from thousand.tables.files import remove_leftovers, search_path, shipped_tables, stored_tables

    gone = [t for t in stored_tables(tables_dir) if t.where != "shipped" and (everything or t.problem)]
    for t in gone:
        shutil.rmtree(t.path, ignore_errors=True)
    # the folders of writes that a kill interrupted: found by their names, whoever left them
    left = [x for root in search_path(tables_dir) if root != shipped_tables() for x in remove_leftovers(root)]
    freed = sum(t.bytes for t in gone) + sum(x.bytes for x in left)
    _emit(
        {
            "removed": [str(t.path) for t in gone],
            "unfinished_writes_removed": [str(x.path) for x in left],
            "bytes_freed": freed,
        },
        as_json,
        "\n".join(
            [f"removed {t.path}" for t in gone]
            + [f"removed {x.path} (an interrupted solve's unfinished write)" for x in left]
            + [f"{len(gone)} tables and {len(left)} unfinished writes removed, {freed / 2**20:.1f} MB freed"]
        ),
    )


# --------------------------------------------------------------------------- solve


@main.command()
@rules_argument
@set_option
@click.option(
    "--objective",
    type=click.Choice(OBJECTIVES),
    default=None,
    help="turn: the most points one turn banks on average (instant; a bank counts its raw "
    "total, with no barrel cap and no samosval; a bust, a mid-turn dump and an overshoot "
    "count 0; an instant win counts the points missing to the goal); race: fewest "
    "expected turns alone (seconds); duel: two-player win probability (seconds for Pig, "
    "Farkle and plain, minutes for the 1000 presets); rate: the most points per turn in the "
    "long run, with the penalty for repeated zero turns (a strategy per zero-turn counter; "
    "Farkle family, Pig, plain). Required unless --players is given.",
)
@click.option(
    "--players",
    "players",
    type=int,
    default=None,
    help="The win probability of every seat for this many players with equilibrium play "
    "(3 or more: the exact N-player equilibrium and its certificate; 2 is the duel).",
)
@click.option(
    "--method",
    type=click.Choice(("dp", "policy", "passes", "textbook")),
    default=None,
    help="How to solve (default: the objective's fastest; duel: policy, passes or textbook, "
    "all reaching the same values; a stored table is used unless --force).",
)
@tables_option
@click.option(
    "--force",
    is_flag=True,
    help="Solve again and replace the stored table (atomically); a duel "
    "starts from a fixed-point table of the same rules if that is the one stored. With --store: "
    "replace FILE.npy, or start again over an interrupted solve's FILE.npy.partial.",
)
@click.option(
    "--fixed-point",
    "fixed_point",
    is_flag=True,
    help="Store the new duel table's values in 32-bit fixed point (within 1.2e-10 of the solved "
    "ones, half the size: how the large shipped tables are made).",
)
@click.option(
    "--store",
    "store",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.npy",
    help="Solve the duel out of core: its values go to FILE.npy (P[mover, opponent]; with "
    "equal_turns the first seat's states, then the second's), with at most --memory-mb of "
    "them in memory at once, by passes; no table is stored.",
)
@click.option(
    "--memory-mb", "memory_mb", type=float, default=None, help="With --store: the memory the values may take (MB)."
)
@click.option(
    "--cluster",
    "cluster",
    default=None,
    metavar="local:N|tcp://HOST:PORT",
    help="Solve the duel, or with --players N the equilibrium, on Dask workers (pip install "
    "'thousand[cluster]'): local:N starts N worker processes here, tcp://HOST:PORT uses a running "
    "scheduler; each worker holds its block of the values, checkpoints let a lost worker or an "
    "interrupted run go on (docs/distributed.md).",
)
@click.option(
    "--checkpoint",
    "checkpoint",
    type=click.Path(file_okay=False),
    default=None,
    metavar="DIR",
    help="With --cluster: the checkpoints' folder, one every worker can write (default: .partial/ "
    "in the tables folder); the same command goes on from it.",
)
@json_option
def solve(
    rules: str,
    overrides: tuple[str, ...],
    objective: str | None,
    players: int | None,
    method: str | None,
    tables_dir: str | None,
    force: bool,
    fixed_point: bool,
    store: str | None,
    memory_mb: float | None,
    cluster: str | None,
    checkpoint: str | None,
    as_json: bool,
) -> None:
    """Solve a ruleset for an objective and print the value of the initial state."""
    from thousand.base.errors import StateError
    from thousand.tables.solve import solve as solve_rules

    rs = _ruleset(rules, overrides)
    t0 = time.perf_counter()
    if players is not None and players < 2:
        raise StateError(_("--players must be at least 2, not {0}").format(players))
    if cluster is not None and store is not None:
        raise StateError(_("--cluster solves into a table: no --store"))
    if checkpoint is not None and cluster is None:
        raise StateError(_("--checkpoint goes with --cluster"))
    if store is not None or memory_mb is not None:
        if store is None or memory_mb is None:
            raise StateError(_("--store FILE.npy and --memory-mb MB go together"))
        if (
            (players or 2) != 2
            or objective not in (None, "duel")
            or method not in (None, "passes")
            or fixed_point
            or tables_dir
        ):
            raise StateError(
                _(
                    "--store solves the duel by passes into FILE.npy: it takes no --players, "
                    "--objective other than duel, --method other than passes, --fixed-point or "
                    "--tables"
                )
            )
        from thousand.tables.solve import solve_duel_to_store

        data = solve_duel_to_store(rs, store, memory_mb, force=force)
        data["seconds"] = round(time.perf_counter() - t0, 6)
        _emit(
            data,
            as_json,
            _(
                "{name} duel out of core: P(first player wins) = {p:.12f}; {passes} passes, "
                "residual {res:.1e}, {s:.1f} s, values in {path} ({n:,} x {n:,})"
            ).format(
                name=rs.name,
                p=data["start_value"],
                passes=data["iterations"],
                res=data["residual"],
                s=data["solve_seconds"],
                path=data["store"],
                n=data["store_shape"][0],
            ),
        )
        return
    if fixed_point and ((players is not None and players > 2) or objective not in (None, "duel")):
        raise StateError(
            _("--fixed-point stores duel tables, not {0}").format(
                f"--players {players}" if objective in (None, "duel") else f"--objective {objective}"
            )
        )
    if players is not None and players > 2:
        if objective not in (None, "duel") or method is not None:
            raise StateError(
                _(
                    "--players {0} solves the win probabilities of {0} seats: it takes neither "
                    "--objective {1} nor --method"
                ).format(players, objective or method)
            )
        from thousand.tables.players import solve_players

        res = solve_players(rs, players, tables_dir, force=force, progress=True, cluster=cluster, checkpoint=checkpoint)
        data = {
            "ruleset": rs.name,
            "ruleset_hash": rs.hash,
            "objective": "win",
            **res.summary(),
            "seconds": round(time.perf_counter() - t0, 6),
        }
        _emit(data, as_json, res.describe())
        return
    if players == 2:
        if objective not in (None, "duel"):
            raise StateError(_("--players 2 is the duel: it takes no --objective {0}").format(objective))
        objective = "duel"
    if objective is None:
        raise StateError(_("say what to solve: --objective turn|race|duel|rate, or --players N"))
    res = solve_rules(
        rs,
        objective,
        method=method,
        tables=tables_dir,
        force=force,
        progress=True,
        encoding="fixed32" if fixed_point else "float64",
        cluster=cluster,
        checkpoint=checkpoint,
    )
    data = {"ruleset": rs.name, "ruleset_hash": rs.hash, "objective": objective}
    data.update(res.summary())
    data["seconds"] = round(time.perf_counter() - t0, 6)
    _emit(data, as_json, res.describe(rs))


# --------------------------------------------------------------------------- advise


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
    from thousand.base.errors import StateError
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


@main.command()
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
    from thousand.base.errors import StateError
    from thousand.engine.player import Moves
    from thousand.solvers.advice import duel_advisor, last_turn_advisor, race_advisor
    from thousand.tables.solve import note_rounding, solve_objective

    rs = _ruleset(rules, overrides)
    objective = objective or ("duel" if opp or to_beat is not None else "race")
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
    x = _player(rs, me, kw)
    ys = _opponents(rs, opp, kw)
    for y in ys:
        Moves(rs).check_pair(x, y)
    y = ys[0] if ys else None
    if to_beat is not None:
        roll = _checked_roll(rs, x, turn_total, dice, roll_text)
        label = "; ".join(
            [_("you: {me}; last turn against a finished total of {total}").format(me=x.describe(rs), total=to_beat)]
            + [_("still to play {k}: {opp}").format(k=k + 1, opp=o.describe(rs)) for k, o in enumerate(ys)]
        )
        adv = last_turn_advisor(rs, to_beat, tied, ys).advise(x, turn_total, dice, roll, state_label=label)
        tie = _("a tie counts 1/2") if not ys and tied == 1 else _("a tie at the top among k players is worth 1/k")
        adv.note = "; ".join(n for n in (adv.note, tie) if n)
        if as_json:
            click.echo(
                json.dumps(
                    {"ruleset": rs.name, "ruleset_hash": rs.hash, "to_beat": to_beat, "tied": tied, **adv.to_json()}
                )
            )
        else:
            click.echo(adv.render())
        return
    if len(ys) > 1 and objective == "duel":
        seat_i = None
        if rs.equal_turns:
            if seat is None:
                raise StateError(
                    _(
                        "{name} plays equal turns: say which seat you move in, --seat first, second, ... (of {n})"
                    ).format(name=rs.name, n=len(ys) + 1)
                )
            seat_i = SEATS.index(seat)
            if seat_i > len(ys):
                raise StateError(
                    _("--seat {seat}: a game of {n} players has seats first to {last}").format(
                        seat=seat, n=len(ys) + 1, last=SEATS[len(ys)]
                    )
                )
        roll = _checked_roll(rs, x, turn_total, dice, roll_text)
        from thousand.play.game import Advisors, advice_json, advice_text

        label = "; ".join(
            [_("you: {me}").format(me=x.describe(rs))]
            + [_("opponent {k}: {opp}").format(k=k + 1, opp=o.describe(rs)) for k, o in enumerate(ys)]
        )
        parts = Advisors(rs, "auto", tables_dir).several(x, ys, turn_total, dice, roll, label, seat=seat_i)
        if as_json:
            click.echo(
                json.dumps(
                    {"ruleset": rs.name, "ruleset_hash": rs.hash, "players": len(ys) + 1, "advice": advice_json(parts)}
                )
            )
        else:
            click.echo(advice_text(parts))
        return
    if objective == "duel" and y is None and to_beat is None:
        raise StateError(_("the duel needs the opponent's score: --opp S"))
    if seat and SEATS.index(seat) > 1:
        raise StateError(_("--seat {seat}: a duel has the first and the second seat").format(seat=seat))
    if objective == "duel" and rs.equal_turns and seat is None and to_beat is None:
        raise StateError(
            _("{name} plays equal turns: say which seat you move in, --seat first or --seat second").format(
                name=rs.name
            )
        )
    roll = _checked_roll(rs, x, turn_total, dice, roll_text)
    if objective == "rate":
        if y is not None:
            raise StateError(_("the rate is solitaire: it takes no --opp"))
        from thousand.solvers.advice import rate_advisor
        from thousand.solvers.rate import solve_rate

        rate = solve_rate(rs)
        adv = rate_advisor(rate).advise(x, turn_total, dice, roll, state_label=_("you: {me}").format(me=x.describe(rs)))
        gain = _(
            "long run: {gain} points per turn; an option's value is its points plus the relative value of "
            "the counter it leaves"
        ).format(gain=f"{rate.gain:.4f}")
        adv.note = "; ".join(n for n in (gain, adv.note) if n)
    elif objective == "duel":
        label = _("you: {me}; opponent: {opp}").format(me=x.describe(rs), opp=y.describe(rs))
        if seat:
            label = _("you ({seat} seat): {me}; opponent: {opp}").format(
                seat=_(seat), me=x.describe(rs), opp=y.describe(rs)
            )
        from thousand.tables.solve import DuelTooLarge

        seat_i = ("first", "second").index(seat) if seat else None
        try:
            sol = solve_objective(rs, objective, tables_dir, progress=True)
        except DuelTooLarge as too_large:
            # the exact duel does not fit: the measured memoryless-opponent approximation, labelled
            from thousand.solvers.geometric import approximation_note
            from thousand.tables.geometric import geometric_duel

            adv = duel_advisor(geometric_duel(rs, tables_dir), y, seat_i, "estimated_win_probability").advise(
                x, turn_total, dice, roll, state_label=label
            )
            adv.note = "; ".join(n for n in (approximation_note(str(too_large)), adv.note) if n)
        else:
            adv = note_rounding(sol, duel_advisor(sol, y, seat_i).advise(x, turn_total, dice, roll, state_label=label))
    else:
        adv = race_advisor(solve_objective(rs, objective, tables_dir, progress=True)).advise(x, turn_total, dice, roll)
        if opp is None:
            adv.note = "; ".join(
                n
                for n in (
                    _(
                        "solitaire: the fewest expected turns to win alone (give --opp S "
                        "for the win probability against an opponent)"
                    ),
                    adv.note,
                )
                if n
            )
    if as_json:
        click.echo(json.dumps({"ruleset": rs.name, "ruleset_hash": rs.hash, **adv.to_json()}))
    else:
        click.echo(adv.render())


# --------------------------------------------------------------------------- evaluate (bots)


@main.command()
@rules_argument
@set_option
@click.option(
    "--bot",
    "bot_spec",
    required=True,
    metavar="SPEC",
    help="optimal, race, hold:N, cautious, random, exec:COMMAND (JSON lines), module:attr or path/to/file.py:attr.",
)
@click.option(
    "--opponent",
    "opp_spec",
    default="optimal",
    show_default=True,
    metavar="SPEC",
    help="The opponent in a duel (a bot spec).",
)
@click.option(
    "--objective",
    type=click.Choice(("duel", "race")),
    default="duel",
    show_default=True,
    help="duel: win probability against the opponent; race: expected turns alone.",
)
@click.option(
    "--games",
    type=int,
    default=2000,
    show_default=True,
    help="Monte Carlo games (a duel plays half of them in each seat order); 0: none.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the dice (and of random bots).")
@click.option(
    "--exact/--no-exact",
    default=True,
    show_default=True,
    help="Evaluate exactly where the decision states fit the budget.",
)
@click.option(
    "--budget",
    type=int,
    default=EXACT_BUDGET,
    show_default=True,
    help="Most decision states the exact evaluation asks the bot about.",
)
@click.option(
    "--blunder-games",
    type=int,
    default=500,
    show_default=True,
    help="Monte Carlo games in which every decision of the bot is valued by the table.",
)
@click.option("--worst", type=int, default=5, show_default=True, help="Worst decisions to list.")
@click.option(
    "--timeout", type=float, default=2.0, show_default=True, help="Seconds an exec: bot has for each decision."
)
@click.option(
    "--players",
    "players",
    type=int,
    default=2,
    show_default=True,
    help="3 or more: the bot in each seat in turn, the others playing the exact equilibrium of "
    "that many players (--opponent does not apply).",
)
@tables_option
@json_option
def evaluate(
    rules: str,
    overrides: tuple[str, ...],
    bot_spec: str,
    opp_spec: str,
    objective: str,
    games: int,
    seed: int,
    exact: bool,
    budget: int,
    blunder_games: int,
    worst: int,
    timeout: float,
    players: int,
    tables_dir: str | None,
    as_json: bool,
) -> None:
    """How far a bot is from optimal play, and where it goes wrong."""
    from thousand.analysis.evaluate import run_evaluation
    from thousand.base.errors import BotError

    rs = _ruleset(rules, overrides)
    _check_counts(("--games", games), ("--budget", budget), ("--blunder-games", blunder_games), ("--worst", worst))
    if not timeout > 0:
        raise BotError(_("--timeout must be positive"))
    if players < 2:
        raise BotError(_("--players must be at least 2, not {0}").format(players))
    if players > 2:
        if objective != "duel" or opp_spec != "optimal":
            raise BotError(
                _(
                    "--players {0}: the others play the equilibrium; it takes neither --objective race nor --opponent"
                ).format(players)
            )
        from thousand.analysis.seats import evaluate_players

        report = evaluate_players(rs, bot_spec, players, games, seed, exact, budget, timeout, tables_dir)
        _emit(report["json"], as_json, report["text"])
        return
    report = run_evaluation(
        rs,
        bot_spec,
        opp_spec,
        objective,
        games,
        seed,
        exact,
        budget,
        worst,
        timeout,
        tables_dir,
        overrides,
        blunder_games=blunder_games,
    )
    _emit(report["json"], as_json, report["text"])


# --------------------------------------------------------------------------- play


@main.command()
@click.argument("rules", metavar="[RULES]", required=False)
@click.argument("names", nargs=-1, metavar="[A B ...]")
@click.option(
    "--players",
    "players",
    multiple=True,
    metavar="NAME",
    help="The players in the order of play: --players A B C, or --players A,B,C.",
)
@set_option
@click.option("--seed", type=int, default=None, help="Seed for the dice the program throws (`roll` alone).")
@click.option(
    "--resume",
    "resume",
    type=click.Path(dir_okay=False),
    default=None,
    help="Resume a saved game (its rules and players come with it).",
)
@click.option(
    "--advice",
    type=click.Choice(ADVICE_MODES),
    default="auto",
    show_default=True,
    help="What `?` uses: duel (exact for two players; solved on first use), race "
    "(the solitaire policy), auto (duel when its table exists or solves in seconds, "
    "and with 3+ players the race policy too).",
)
@tables_option
def play(
    rules: str | None,
    names: tuple[str, ...],
    players: tuple[str, ...],
    overrides: tuple[str, ...],
    seed: int | None,
    resume: str | None,
    advice: str,
    tables_dir: str | None,
) -> None:
    """Keep the score sheet of a real game: thousand play RULES --players A B [C ...].

    Reads commands line by line from stdin (type `help`): enter the rolls or let the
    program roll, set dice aside, roll on or stop; every rule of RULES is applied to
    the sheet. `?` shows advice; `undo` takes back an entry. The game is saved as it
    goes (under ~/.local/state/thousand/games, or back to the --resume file), so the
    end of the input or Ctrl-C loses nothing: thousand play --resume FILE goes on.
    """
    import datetime
    import secrets
    from pathlib import Path

    from thousand.base.untrusted import ensure_private_folder
    from thousand.play.game import Advisors, open_game, run_command
    from thousand.play.session import autosave_dir, run_session

    # `--players A B C` gives A to the option and B, C as arguments: one list in order
    plist = [p for n in (*players, *names) for p in n.split(",") if p]
    g, said = open_game(rules, overrides, plist, seed, resume)
    if said:
        click.echo(said)
    # a name of its own for every game (two games started in the same second never share one)
    if resume:
        path = Path(resume)
    else:
        try:
            folder = ensure_private_folder(autosave_dir())
        except OSError as exc:
            raise StateError(
                _("cannot use {0} for the saved games: {1}").format(autosave_dir(), exc.strerror or exc)
            ) from None
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        name = "".join(c if c.isalnum() else "-" for c in g.rs.name)
        path = folder / f"{stamp}-{name}-{secrets.token_hex(3)}.json"
    if isinstance(g.rs, PokerRuleset):
        from thousand.play.poker import PokerAdvisor, run_poker_command

        sys.exit(
            run_session(g, PokerAdvisor(g.rs, tables_dir), sys.stdin, click.echo, run_poker_command, autosave=path)
        )
    sys.exit(run_session(g, Advisors(g.rs, advice, tables_dir), sys.stdin, click.echo, run_command, autosave=path))


# --------------------------------------------------------------------------- review


@main.command()
@click.argument("game", metavar="GAME", type=click.Path(dir_okay=False))
@click.option(
    "--objective",
    type=click.Choice(REVIEW_OBJECTIVES),
    default="win",
    show_default=True,
    help="What a decision gives up: win probability (the duel or the N-player game), or expected points of the turn.",
)
@click.option(
    "--advice",
    type=click.Choice(ADVICE_MODES),
    default="auto",
    show_default=True,
    help="Where the win probabilities come from, as in `thousand play`: auto takes the exact duel or "
    "equilibrium where it can, else the best measured approximation.",
)
@click.option("--chart", "chart_out", type=OUTPUT_FILE, default=None, help="The curve (PNG).")
@json_option
@tables_option
def review(game: str, objective: str, advice: str, chart_out: str | None, as_json: bool, tables_dir: str | None):
    """Review a saved game (from `thousand play` or the web page): every decision of every
    player with the best option and what the choice gave up, then each player's accuracy
    (decisions within 0.1 percentage point of the best), total loss and worst decisions.
    """
    from thousand.play.review import draw, load_game, render, review_game

    rv = review_game(load_game(game), objective, tables_dir, advice)
    if chart_out:
        draw(rv, chart_out)
    _emit(rv.to_json(), as_json, render(rv) + (f"\nchart: {chart_out}" if chart_out else ""))


# --------------------------------------------------------------------------- card


@main.command()
@rules_argument
@set_option
@click.option(
    "--cells",
    type=click.IntRange(1, 60),
    default=12,
    show_default=True,
    help="The most numbers the card may have: its marks (by dice to roll, score gap or your own score, endgame), "
    "and a worth per column where you choose which dice to set aside.",
)
@click.option(
    "--shapes",
    "shape_specs",
    multiple=True,
    metavar="C,R,E[,score]",
    help="Search only these shapes: columns (groups of dice counts), rows (by the score gap, or by your own "
    "score with ,score), endgame row 0 or 1; repeatable (default: every shape that fits --cells).",
)
@click.option("--out", "md_out", type=OUTPUT_FILE, default=None, help="Write the card as Markdown.")
@click.option("--png", "png_out", type=OUTPUT_FILE, default=None, help="The card as a one-page PNG.")
@json_option
@tables_option
def card(
    rules: str,
    overrides: tuple[str, ...],
    cells: int,
    shape_specs: tuple[str, ...],
    md_out: str | None,
    png_out: str | None,
    as_json: bool,
    tables_dir: str | None,
):
    """A strategy card a person can remember: stop marks by dice left and score gap, found
    by searching the cards of each size for the least win probability given up against an
    optimal opponent, measured exactly (docs/card.md). Where that duel is out of reach
    (six-dice), the turn's optimum as a card, measured by one turn's points alone."""
    from thousand.analysis.card import CardDuel, DuelOutOfReach, find_card, parse_shape, turn_only

    rs = _ruleset(rules, overrides)
    only = [parse_shape(rs, s) for s in shape_specs] or None
    if png_out:
        from thousand.analysis.chart import check_card_png

        check_card_png(png_out)
    # a ruleset of one's own has its duel solved first, with its estimate and progress bar
    try:
        duel = CardDuel(rs, tables_dir=tables_dir, progress=not as_json)
    except DuelOutOfReach as exc:  # no duel to search by: the turn's card, measured by its points
        rep = turn_only(rs, str(exc), cells)
    else:
        say = None if as_json else lambda s: click.echo(s, err=True)
        rep = find_card(rs, cells, duel=duel, progress=say, only=only)
    text = rep.card.markdown(rep)
    if md_out:
        try:
            Path(md_out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise StateError(_("cannot write {0}: {1}").format(md_out, exc.strerror or exc)) from None
    if png_out:
        from thousand.analysis.chart import draw_card

        draw_card(rep.card, rep, png_out)
    _emit(rep.to_json(), as_json, text.rstrip())


# --------------------------------------------------------------------------- chart


@main.command()
@rules_argument
@set_option
@click.option(
    "--objective",
    type=click.Choice(("race", "duel")),
    default="race",
    show_default=True,
    help="race: fewest expected turns alone; duel: two-player win probability.",
)
@click.option(
    "--kind",
    type=click.Choice(CHART_KINDS),
    default="stop",
    show_default=True,
    help="stop: when to stop (race: per score and dice; duel: over both scores); "
    "win: duel win probability over both scores; rules: race hold-at totals of "
    "RULES and the --compare rulesets on one plot.",
)
@click.option(
    "--compare",
    multiple=True,
    metavar="RULES",
    help="With --kind rules: rulesets to compare with (default: classic-nobarrel, plain); "
    "the --set overrides apply to them too.",
)
@click.option("--out", "out", type=OUTPUT_FILE, default=None, help="The picture (PNG).")
@click.option(
    "--data",
    "data",
    type=OUTPUT_FILE,
    default=None,
    help="Write the numbers behind the chart as CSV (works without matplotlib).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers behind the chart as JSON.")
@tables_option
def chart(
    rules: str,
    overrides: tuple[str, ...],
    objective: str,
    kind: str,
    compare: tuple[str, ...],
    out: str | None,
    data: str | None,
    as_json: bool,
    tables_dir: str | None,
) -> None:
    """Charts to learn from: when to stop, and who is winning (from the solved tables)."""
    from thousand.analysis.chart import make_chart
    from thousand.base.errors import StateError

    if not (out or data or as_json):
        raise StateError(_("say where the chart goes: --out FILE.png, --data FILE.csv or --json"))
    rs = _ruleset(rules, overrides)
    rows = make_chart(rs, rules, objective, kind, compare, overrides, tables_dir, out, data)
    if as_json:
        click.echo(
            json.dumps(
                {"ruleset": rs.name, "ruleset_hash": rs.hash, "objective": objective, "kind": kind, "rows": rows}
            )
        )
    else:
        click.echo(
            f"{rs.name} {objective} {kind}: {len(rows)} rows"
            + (f", data {data}" if data else "")
            + (f", chart {out}" if out else "")
        )


def _lan_address() -> str:
    """This machine's address on the local network (the route a UDP socket would take; no
    packet is sent)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


@main.command()
@click.option(
    "--host",
    default=None,
    help="Address to listen on (default 127.0.0.1, this machine alone; with --lan 0.0.0.0).",
)
@click.option(
    "--lan",
    is_flag=True,
    help="Share the page with the phones of the local network: listen beyond loopback, print the "
    "address and its QR code; each game opens on another phone only with its link (a secret token).",
)
@click.option(
    "--https",
    "https",
    is_flag=True,
    help="Serve over HTTPS with a certificate of the table's own authority (made once, kept in --certs): "
    "the phones that install the authority can install the page and open it without the server.",
)
@click.option(
    "--certs",
    "certs_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder of the table's authority and certificate (default: ~/.local/state/thousand/tls).",
)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Another name the page is opened by (a DNS name of this machine, a reverse proxy's); "
    "requests naming any other host are refused (loopback and the --lan address always work).",
)
@click.option(
    "--games",
    "games_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder of the saved games (default: ~/.local/state/thousand/web).",
)
@tables_option
def serve(
    host: str | None,
    lan: bool,
    https: bool,
    certs_dir: str | None,
    port: int,
    allow_hosts: tuple[str, ...],
    games_dir: str | None,
    tables_dir: str | None,
) -> None:
    """The advisor and scorekeeper as a web page for a phone at the table (needs the web
    extra: pip install -e '.[web]')."""
    from thousand.base.errors import ThousandError as _Missing

    try:
        import uvicorn

        from thousand.web.app import create_app
    except ImportError as exc:
        raise _Missing(
            _("thousand serve needs the web extra ({0}): pip install -e '.[web]'").format(exc.name)
        ) from None
    from pathlib import Path

    from thousand.base.untrusted import cut, ensure_private_folder
    from thousand.web.store import default_folder

    folder = Path(games_dir) if games_dir else default_folder()
    try:
        ensure_private_folder(folder)
    except OSError as exc:
        raise _Missing(_("cannot use {0} for the saved games: {1}").format(folder, exc.strerror or exc)) from None
    host = host or ("0.0.0.0" if lan else "127.0.0.1")
    local = host in ("127.0.0.1", "localhost", "::1")
    address = _lan_address() if host in ("0.0.0.0", "::") else host
    scheme, certs, tls = "http", None, {}
    if https:
        from thousand.web.tls import table_certificates

        certs = table_certificates(address, Path(certs_dir) if certs_dir else None)
        scheme, tls = "https", {"ssl_certfile": str(certs.cert), "ssl_keyfile": str(certs.key)}
    # beyond loopback every game needs its token from another device, whatever the flag
    lan_url = None if local else f"{scheme}://{address}:{port}/"
    bad = [h for h in allow_hosts if not h or any(c in h for c in "/@ ")]
    if bad:
        raise _Missing(_("--allow-host takes a host name, not {0!r}").format(cut(bad[0])))
    hosts = (*allow_hosts, *(() if host in ("0.0.0.0", "::") else (host,)))
    app = create_app(folder, tables_dir, lan_url, authority=certs.ca if certs else None, hosts=hosts)
    click.echo(
        _("thousand serve: {0}://{1}:{2}/ (games saved in {3})").format(
            scheme, "localhost" if local else host, port, folder
        )
    )
    if certs:
        click.echo(
            _(
                "HTTPS with the table's own authority {0} (SHA-256 {1}): install it once on each phone, from "
                "the page's link or {2}table-ca.crt, and the page installs there and opens without the server"
            ).format(certs.ca, certs.fingerprint, lan_url or f"https://localhost:{port}/")
        )
    if not local:
        click.echo(
            _(
                "listening on {0}: the devices of the local network can open the page; a game opens on "
                "another device only with its link, shown on the page; stop with Ctrl-C"
            ).format(host)
        )
        click.echo(_("on a phone: {0}").format(lan_url))
        try:
            import io

            import segno
        except ImportError:  # the web extra brings it; the address above is enough
            pass
        else:
            qr = io.StringIO()
            segno.make(lan_url, error="m").terminal(out=qr, compact=True)
            click.echo(qr.getvalue(), nl=False)
    uvicorn.run(app, host=host, port=port, log_level="warning", **tls)


# --------------------------------------------------------------------------- poker dice
# `thousand solve|advise|evaluate poker ...`: the same verbs for the poker-dice ruleset kind
# (the group picks these when RULES is a poker-dice ruleset; `play` takes both games).

players_option = click.option(
    "--players", "players", type=int, default=2, show_default=True, help="Players in the game (2 to 8)."
)


def _say(line: str) -> None:
    click.echo(f"thousand: {line}", err=True)


def _hand(rs: PokerRuleset, text: str, what: str):
    from thousand.base.errors import StateError

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
    rs = _ruleset(rules, overrides, poker=True)
    t0 = time.perf_counter()
    if reach is not None:
        from thousand.solvers.poker_advice import reach_probability

        h = _hand(rs, reach, "--reach")
        p = reach_probability(rs, rs.hands.strength(h.dice))
        desc = rs.hands.describe(rs.hands.strength(h.dice))
        _emit(
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
    from thousand.base.errors import StateError
    from thousand.solvers.poker import MAX_PLAYERS
    from thousand.tables.poker import poker_solution

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
    _emit(data, as_json, "\n".join(lines))


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
    from thousand.base.errors import StateError
    from thousand.rules.poker import parse_dice
    from thousand.solvers.poker import situation_of
    from thousand.solvers.poker_advice import advise, advise_reach, turn_state
    from thousand.tables.poker import poker_solution

    rs = _ruleset(rules, overrides, poker=True)
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
    from thousand.base.errors import BotError
    from thousand.solvers.poker import MAX_PLAYERS
    from thousand.tables.poker import poker_solution

    rs = _ruleset(rules, overrides, poker=True)
    budget = EXACT_BUDGET if budget is None else budget
    _check_counts(("--games", games), ("--budget", budget), ("--worst", worst))
    if not timeout > 0:
        raise BotError(_("--timeout must be positive"))
    if not 2 <= players <= MAX_PLAYERS:
        raise BotError(_("--players must be 2 to {0}, not {1}").format(MAX_PLAYERS, players))
    sol = poker_solution(rs, players, tables_dir, progress=_say)
    report = evaluate_poker(rs, sol, bot_spec, players, games, seed, exact, budget, worst, timeout)
    _emit(report["json"], as_json, report["text"])


POKER_COMMANDS = {"solve": poker_solve, "advise": poker_advise, "evaluate": poker_evaluate}


if __name__ == "__main__":  # pragma: no cover
    main()
