"""The static app: the page of ``thousand serve`` built into a folder that any static host
serves (``thousand web build OUT/``), which installs on a phone and from then on keeps score
and advises with no network.

The app also opens from the folder itself (``index.html`` from a disk, ``file://``): every
data file has a twin script (``F.js``) that the page loads where it may fetch nothing.

The folder holds the page itself (``index.html``, ``static/``: the same files the server
serves, so the two are one front end), its service worker (``sw.js``, which keeps every file
of the folder on the phone at the first visit), the manifest, and per ruleset in ``data/``:

* ``rules/<name>.json``: the parameters the page's scorekeeper reads (:func:`page_rules`), the
  roll classes of the kernel (:func:`thousand.kernel.roll_table`: every roll's set-asides and
  probability, so that ``advisor.js`` never scores a roll itself), the duel table's player
  states, and per number of players the method the advice layer chooses and its heading in
  each language (:meth:`thousand.advice.Advisor.duels_method`);
* ``tables/<name>.duel/<k>.bin``: the duel table's values as stored (float64, or 32-bit fixed
  point for the large ones), little-endian, ``P[mover, opponent]`` row by row, in blocks of
  rows of about :data:`BLOCK_BYTES` (block ``k`` holds rows ``k * rows_per_block`` on): a
  decision reads the rows of its opponents only, so the first advice reads a few blocks, not
  the whole table (classic's is 10 MB).

``static/advisor.js`` solves the turn in the browser from those values (the kernel's turn DP,
one more twin of it; tests/test_static_app.py holds it to the Python advisor). A ruleset
without a duel table on this machine (any ruleset whose duel was never solved) is built for
scorekeeping, and its advice says why there is none; with equal turns (six-dice, whose duel
does not fit) the last turn of a round with nobody after it is advised exactly all the same,
as it needs no table.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np

from thousand import kernel
from thousand.advice import Advisor
from thousand.base import i18n
from thousand.base.errors import ThousandError
from thousand.base.i18n import _
from thousand.rules.ruleset import Ruleset, load_ruleset, preset_names
from thousand.solvers.advice import WORDS
from thousand.storage.files import FIXED32, FIXED32_SCALE, find_table
from thousand.storage.solve import loaded

from .offline import page_rules
from .page import MAX_PLAYERS, PAGE_WORDS, STATIC

__all__ = ["DEFAULT_LIMIT_MB", "MARK", "BuildError", "build_static", "default_presets"]

MARK = "thousand-app.json"  # what says a folder is a build of this app (and may be rebuilt over)
DEFAULT_LIMIT_MB = 15.0  # a ruleset whose duel table is larger is built only when asked for by name
BLOCK_BYTES = 128 * 1024  # the size of a block of a table's rows (a few blocks per decision)


class BuildError(ThousandError):
    """A build that cannot be written where it was asked for."""


PAGE_FILES = ("app.js", "rules.js", "advisor.js", "app.css", "icon-192.png", "icon-512.png")


def default_presets(tables_dir: str | None = None, limit_mb: float = DEFAULT_LIMIT_MB) -> list[str]:
    """The presets of the 1000 family a build holds when none is named: every one whose duel
    table is found and at most ``limit_mb`` (classic-open's 52 MB is not), and the ones
    without a duel table for scorekeeping."""
    out = []
    for name in preset_names(game="1000"):
        table = _duel_table(load_ruleset(name), tables_dir)
        if table is None or table.path.joinpath("values.npy").stat().st_size <= limit_mb * 2**20:
            out.append(name)
    return out


def _duel_table(rs: Ruleset, tables_dir: str | None):
    if rs.equal_turns:  # advisor.js plays first-to-the-goal duels; equal turns need the seated table
        return None
    return find_table(rs, "duel", tables_dir)


def build_static(out: Path, presets: list[str] | None = None, tables_dir: str | None = None) -> dict:
    """Write the static app into ``out`` (created, or a former build replaced; a folder that
    holds anything else is refused). Returns the build's summary (``MARK``): its version, per
    ruleset the advice it carries (``duel``: every decision, ``last turn``: an equal-turns
    round's last turns only, None: none), its files and bytes."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARK).is_file())):
        raise BuildError(_("{0} is not empty and is not a build of this app: give an empty or new folder").format(out))
    names = list(dict.fromkeys(presets or default_presets(tables_dir)))
    rulesets = [load_ruleset(n) for n in names]  # a wrong name is refused before anything is written
    staging = out.with_name(out.name + ".building")
    if staging.exists():
        shutil.rmtree(staging)
    (staging / "static").mkdir(parents=True)
    (staging / "data" / "rules").mkdir(parents=True)
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    (staging / "index.html").write_text(html.replace('<html lang="en">', '<html lang="en" data-static="1">', 1))
    for f in PAGE_FILES:
        shutil.copyfile(STATIC / f, staging / "static" / f)
    shutil.copyfile(STATIC / "manifest.webmanifest", staging / "manifest.webmanifest")
    for lang in i18n.LANGUAGES:
        _write_json(staging / "data" / f"strings.{lang}.json", _strings(lang))
    listing, kept = [], {}
    for rs in rulesets:
        entry = _ruleset_files(staging, rs, tables_dir)
        listing.append(entry)
        kept[rs.name] = entry["advice"]
    _write_json(staging / "data" / "presets.json", listing)
    files = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())
    _script_twins(staging)
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.encode() + (staging / f).read_bytes())
    version = digest.hexdigest()[:16]
    worker = (STATIC / "sw.js").read_text(encoding="utf-8")
    worker = worker.replace("__VERSION__", version).replace(
        "const STATIC_FILES = null;", "const STATIC_FILES = " + json.dumps(["./", *files]) + ";"
    )
    (staging / "sw.js").write_text(worker, encoding="utf-8")
    files.append("sw.js")
    summary = {
        "version": version,
        "presets": kept,
        "bytes": sum((staging / f).stat().st_size for f in files),  # what a phone downloads and keeps
        "files": len(files),
    }
    _write_json(staging / MARK, summary)
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return summary


def _script_twins(staging: Path) -> None:
    """Beside every data file ``F``, ``F.js``: the same data as a script that hands it to the
    page (``ThousandData.put(F, ...)``; a table's block in base64), for the app opened from the
    folder itself (``file://``), where a browser lets a page load scripts but fetch nothing.
    Served from a host, the page fetches the files themselves and the worker keeps only those."""
    for path in sorted((staging / "data").rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(staging).as_posix()
        if path.suffix == ".json":
            payload = path.read_text(encoding="utf-8")
        else:
            payload = json.dumps(base64.b64encode(path.read_bytes()).decode("ascii"))
        path.with_name(path.name + ".js").write_text(
            f"ThousandData.put({json.dumps(rel)}, {payload});\n", encoding="utf-8"
        )


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def _strings(lang: str) -> dict:
    """The page's words and the advice's (``adv_`` + the key of
    :data:`thousand.solvers.advice.WORDS`) in ``lang``."""
    with i18n.using(lang):
        words = {k: _(v) for k, v in PAGE_WORDS.items()}
        words.update({"adv_" + k: _(v) for k, v in WORDS.items()})
    return {"lang": lang, "languages": list(i18n.LANGUAGES), "words": words}


def _ruleset_files(staging: Path, rs: Ruleset, tables_dir: str | None) -> dict:
    """Write ``data/rules/<name>.json`` (and the duel table's values); the preset's entry
    of ``presets.json``."""
    table = _duel_table(rs, tables_dir)
    data: dict = {"name": rs.name, "hash": rs.hash, "engine": page_rules(rs), "table": None, "rolls": _rolls(rs)}
    if rs.equal_turns:  # a last turn with nobody after it is exact with no table
        data["last_turn"] = {}
        for lang in i18n.LANGUAGES:
            with i18n.using(lang):
                data["last_turn"][lang] = {
                    "heading": Advisor.last_turn_heading("{total}", "{k}", 0),
                    "heading_alone": Advisor.last_turn_heading("{total}", 1, 0),
                    "why_later": _("no advice in the offline app for a last turn with players still to play after it"),
                }
    if table is None:
        with_why = {}
        for lang in i18n.LANGUAGES:
            with i18n.using(lang):
                with_why[lang] = (
                    _("in the offline app {0} is advised in the last turn of a round only (equal turns)").format(
                        rs.name
                    )
                    if rs.equal_turns
                    else _("no advice in the offline app for {0}: its exact two-player table was not solved").format(
                        rs.name
                    )
                )
        data["why"] = with_why
    else:
        data.update(_advice_data(staging, rs, table))
    _write_json(staging / "data" / "rules" / f"{rs.name}.json", data)
    advice = "duel" if table is not None else "last turn" if rs.equal_turns else None
    return {"name": rs.name, "summary": rs.summary, "players": [2, MAX_PLAYERS], "advice": advice}


def _rolls(rs: Ruleset) -> dict:
    """The kernel's roll classes of ``rs`` (:class:`thousand.kernel.RollTable`), as advisor.js reads them."""
    t = kernel.roll_table(rs)
    return {
        "dice": int(t.dice),
        "hot_mode": int(t.hot_mode),
        **{
            k: [v.item() for v in getattr(t, k)]
            for k in ("cls_ptr", "cls_prob", "cls_instant", "opt_ptr", "opt_points", "opt_used")
        },
    }


def _advice_data(staging: Path, rs: Ruleset, table) -> dict:
    raw = np.load(table.path / "values.npy", mmap_mode="r")
    fixed = table.meta.get("values_encoding") == FIXED32
    stored = np.ascontiguousarray(raw, dtype="<u4" if fixed else "<f8")
    n = int(np.asarray(table.states).shape[0])  # the values are P[mover, opponent], n x n, row by row
    if stored.size != n * n:
        raise BuildError(_("{0}: the duel table does not hold one value per pair of its states").format(rs.name))
    rows = max(1, BLOCK_BYTES // (n * stored.itemsize))
    blocks = staging / "data" / "tables" / f"{rs.name}.duel"
    blocks.mkdir(parents=True)
    flat = stored.reshape(-1)
    for k in range(0, n, rows):
        (blocks / f"{k // rows}.bin").write_bytes(flat[k * n : (k + rows) * n].tobytes())
    advisor = Advisor(rs, on_request=True, solver=lambda *a: None)
    plans, notes = {}, {}
    for lang in i18n.LANGUAGES:
        with i18n.using(lang):
            plans[lang] = {"2": {"method": "duel", "exact": True, "heading": advisor.duel_heading("{other}")}}
            for players in range(3, MAX_PLAYERS + 1):
                method = advisor.duels_method(players, lookahead=False)  # the page computes no lookahead
                plans[lang][str(players)] = {
                    "method": method,
                    "exact": False,
                    "heading": advisor.duels_heading(players, method, strongest="{name}"),
                }
            notes[lang] = "" if table.exact else loaded(rs, "duel", table).rounding_note(command=False)
    return {
        "states": [int(v) for v in np.asarray(table.states).ravel()],
        "table": {
            "blocks": f"data/tables/{rs.name}.duel/",
            "rows_per_block": rows,
            "encoding": "fixed32" if fixed else "float64",
            "scale": FIXED32_SCALE,
            "count": n * n,
            "bytes": int(stored.nbytes),
            "note": notes,
        },
        "plans": plans,
    }
