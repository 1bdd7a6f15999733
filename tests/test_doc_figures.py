"""The figures docs/results.md and docs/solver.md print are what the solver computes today.

Every table row of those pages that names a preset (or a game of the three-player table
below) is read, and each value column is compared, at the digits printed, with a fresh
solve into a temporary folder -- for the duels too long for a test (classic, classic-open,
street, zilch, over 30 s each), with the shipped table, which the same solver wrote and
``tests/test_store.py`` keeps matching its rules. Timings, memory and residuals are
measurements of a run, not values, and are not read. A change of the solver that moves
a printed figure fails here, naming the page, the row and both numbers.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

import thousand
from thousand.rules.ruleset import load_ruleset

DOCS = Path(__file__).resolve().parents[1] / "docs"
PRESETS = set(thousand.preset_names())
SLOW_DUELS = {"classic", "classic-open", "street", "zilch", "six-dice"}
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?")

# the column headings of a value, and what each reads: (objective, what of its solution)
COLUMNS = {
    "turn score": ("turn", "start"),
    "best expected turn (points)": ("turn", "start"),
    "turn value": ("turn", "start"),
    "rate (points per turn)": ("rate", "start"),
    "rate": ("rate", "start"),
    "turns alone": ("race", "start"),
    "expected turns": ("race", "start"),
    "p(first wins)": ("duel", "start"),
    "p(first player wins)": ("duel", "start"),
    "fair compensation": ("duel", "fair"),
    "player states": ("race", "player_states"),
    "duel pairs": ("race", "pairs"),
    "pairs": ("race", "pairs"),
}


def tables(page: str):
    """Every markdown table of a page: (headings, rows of cells), lowercased headings."""
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    k = 0
    while k < len(lines):
        if lines[k].startswith("| ") and k + 1 < len(lines) and lines[k + 1].startswith("|-"):
            head = [c.strip().lower() for c in lines[k].strip("|").split("|")]
            rows = []
            k += 2
            while k < len(lines) and lines[k].startswith("|"):
                rows.append([c.strip() for c in lines[k].strip("|").split("|")])
                k += 1
            yield head, rows
        else:
            k += 1


def printed_equal(cell: str, value: float, page: str, where: str, within: float = 0.0) -> None:
    """The first number of ``cell`` is ``value`` at the digits it prints (and ``within``:
    a shipped fixed-point table's encoding error)."""
    text = NUMBER.search(cell).group(0).replace(",", "")
    printed = float(text)
    if "e" in text:
        mantissa = text.split("e")[0]
        digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
        ulp = 10.0 ** (int(text.split("e")[1]) - digits)
    else:
        ulp = 10.0 ** -(len(text.split(".")[1]) if "." in text else 0)
    said = f"{page}, {where}: prints {text}, the solver gives {value!r}"
    assert abs(value - printed) <= 0.5 * ulp * (1 + 1e-9) + within, said


@cache
def solution(preset: str, objective: str, tmp: str):
    fresh = not (objective == "duel" and preset in SLOW_DUELS)
    return thousand.solve(preset, objective, tables=tmp, force=fresh)


def figure(preset: str, what: tuple[str, str], tmp: str):
    objective, part = what
    sol = solution(preset, objective, tmp)
    if part == "start":
        return sol.start_value()
    if part == "fair":
        return sol.fair_compensation()
    if part == "player_states":
        return sol.info["player_states"]
    return sol.info["player_states"] ** 2


def preset_rows():
    for page in ("results.md", "solver.md"):
        for head, rows in tables(page):
            cols = [(j, COLUMNS[h]) for j, h in enumerate(head) if h in COLUMNS]
            # a table of variants (a min_bank column) is not the presets themselves
            if not cols or head[0] != "preset" or "min_bank" in head:
                continue
            for row in rows:
                if row[0] in PRESETS:  # "six-dice (pits, barrel set aside)" is a variant
                    yield page, head, row, row[0], cols


ROWS = list(preset_rows())


@pytest.mark.parametrize("preset", sorted({r[3] for r in ROWS}))
def test_the_figures_of_a_preset_are_what_the_solver_gives(preset, tmp_path_factory):
    tmp = str(tmp_path_factory.getbasetemp() / "doc-figures")
    checked = 0
    for page, head, row, name, cols in ROWS:
        if name != preset:
            continue
        for j, what in cols:
            cell = row[j]
            if not NUMBER.search(cell) or "not solved" in cell or (preset == "six-dice" and what[0] == "race"):
                continue  # six-dice's race takes minutes; its other figures are read
            if "before" in head[j] or "before" in cell.split(" (")[0]:
                continue
            got = figure(preset, what, tmp)
            table = solution(preset, what[0], tmp).table
            within = table.encoding_error if table is not None else 0.0
            where = f"row {name!r}, column {head[j]!r}"
            if what[1] == "fair":
                points, p = got
                numbers = NUMBER.findall(cell)
                said = f"{page}, {where}: prints {numbers[0]} points, the solver gives {points}"
                assert int(numbers[0]) == points, said
                printed_equal(numbers[1], p, page, where, within)
            else:
                printed_equal(cell, float(got), page, where, within)
            checked += 1
    assert checked, f"no figure of {preset} was read: the tables' headings changed?"


# the N-player tables of results.md and solver.md: the rows a test solves in seconds, by
# their first two cells
PLAYERS = {
    ("Pig to 20", "3"): ("pig", ["goal=20"]),
    ("Pig to 50", "3"): ("pig", ["goal=50"]),
    ("Pig to 100", "3"): ("pig", ["goal=100"]),
    ("farkle to 3000", "3"): ("farkle", ["goal=3000"]),
    ("Pig to 30", "4"): ("pig", ["goal=30"]),
    ("small classic (below)", "3"): ("classic", "the command results.md prints for it"),
    ("Pig to 30, equal turns", "3"): ("pig", ["goal=30", "equal_turns=true"]),
}


def small_classic_sets() -> list[str]:
    """The ``--set`` values of results.md's command for its small classic (so that the
    command the page prints is the game whose figures it prints)."""
    import shlex

    text = " ".join((DOCS / "results.md").read_text(encoding="utf-8").split())
    command = re.search(r"`(thousand solve classic --players 3 --set goal=150 [^`]*)`", text).group(1)
    words = shlex.split(command)
    return [words[k + 1] for k, w in enumerate(words) if w == "--set"]


def players_rows(key):
    """(page, headings, row) of every N-player table row of ``key``."""
    for page in ("results.md", "solver.md"):
        for head, rows in tables(page):
            if head[:2] == ["game", "players"]:
                for row in rows:
                    if (row[0], row[1]) == key:
                        yield page, head, row


@pytest.mark.parametrize("game", sorted(f"{g}, {n} players" for g, n in PLAYERS))
def test_the_equilibria_the_pages_print_are_what_the_solver_gives(game, tmp_path):
    from thousand.storage.players import solve_players

    name, n = game.rsplit(", ", 1)
    key = (name, n.split()[0])
    preset, sets = PLAYERS[key]
    if isinstance(sets, str):  # the small classic: the --set options of the page's own command
        sets = small_classic_sets()
    sol = solve_players(load_ruleset(preset, sets), int(key[1]), str(tmp_path))
    fresh = {
        **{f"seat {k + 1}": float(v) for k, v in enumerate(sol.seat_values())},
        "states": float(sol.meta["states"]),
        "certificate": float(sol.meta["certificate"]),
        "mixed states": float(len(sol.meta.get("mixed", []))),
    }
    rows = list(players_rows(key))
    assert rows, f"no row of {game} in the N-player tables"
    for page, head, row in rows:
        where = f"N-player table, row {game!r}"
        for column, value in fresh.items():
            if column in head and NUMBER.search(row[head.index(column)]):
                printed_equal(row[head.index(column)], value, page, f"{where}, {column}")
        if "fair compensation" not in head:
            continue
        # "seat 2: 0 → 0.331856; seat 3: 4 → 0.330059" (a seat with 0 may omit its chance)
        cell = row[head.index("fair compensation")]
        printed = {int(s): (int(c), p) for s, c, p in re.findall(r"seat (\d): (\d+)(?: → ([0-9.]+))?", cell)}
        for seat, (points, p) in zip(sol.compensated_seats(), sol.fair_compensation()):
            assert seat + 1 in printed, f"{page}, {where}: no compensation printed for seat {seat + 1}"
            c, text = printed[seat + 1]
            assert c == points, f"{page}, {where}: seat {seat + 1} prints {c} points, the solver gives {points}"
            if text:
                printed_equal(text, p, page, f"{where}, seat {seat + 1}'s compensated chance")
    if key == ("Pig to 100", "3"):
        text = (DOCS / "results.md").read_text(encoding="utf-8")
        mixed = len(sol.meta.get("mixed", []))
        assert f"Three-player Pig to 100 has {mixed} states where a mover mixes" in text
        # the orbit the prose names, with its chances
        from thousand.engine.player import PlayerState

        got = sol.table.values[sol.flat([PlayerState(16), PlayerState(40), PlayerState(61)])]
        quoted = re.search(r"its chances are ([0-9.]+),\s+([0-9.]+),\s+([0-9.]+)", text).groups()
        for q, v in zip(quoted, got):
            printed_equal(q, float(v), "results.md", "the orbit (16, 40, 61)")
