"""Policy tables on disk: one folder per ruleset hash and objective.

A table folder ``<hash>-<objective>/`` holds ``values.npy`` (one value per game
state: float64, or for win probabilities optionally 32-bit fixed point, ``q = round(v *
(2**32 - 1))`` stored as uint32, within 1.2e-10 of the solved values at half the size --
how the large shipped duel tables travel), ``states.npy`` (int32, the state encoding) and
``meta.json`` (the ruleset in full, its hash, the objective, the encoding,
shapes, dtypes, format and solver versions, the residual, and the SHA-256 of
both array files, so that a damaged or edited table is refused instead of
giving wrong advice; values must also lie in their objective's range). Tables are
looked up in ``--tables``/``THOUSAND_TABLES``, then the repository's
``tables/``, then the user cache; loading never unpickles and checks
everything against the ruleset asked for (the ruleset stored in full, its hash, the
states and their count, the checksums, the values' range); an exact (float64) table
anywhere on the path is preferred to a fixed-point one; writing goes to a temporary
folder named after the table and the writer's process, renamed into place, so a solve
killed at any moment leaves no table a later run would read, and its leftover folder is
found and removed by the next solve of that table or by ``thousand tables clean``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from thousand.base.errors import TableError
from thousand.base.i18n import _
from thousand.base.objectives import REGISTRY, table_kind
from thousand.base.untrusted import InputError, load_json
from thousand.base.version import __version__
from thousand.engine.states import FIELDS
from thousand.rules.ruleset import Ruleset

__all__ = [
    "ARRAYS",
    "FIXED32",
    "FIXED32_BOUND",
    "FIXED32_SCALE",
    "MODEL_VERSION",
    "PLAYERS",
    "POKER_FIELDS",
    "TABLE_FORMAT",
    "TABLE_NAME",
    "TEMPORARY",
    "VALUE_RANGE",
    "Leftover",
    "StoredTable",
    "Table",
    "check_duel_table",
    "check_geometric_table",
    "check_players_table",
    "file_sha256",
    "find_table",
    "folder_name",
    "leftovers",
    "load_table",
    "remove_leftovers",
    "save_table",
    "search_path",
    "shipped_tables",
    "state_fields",
    "stored_tables",
    "user_cache",
    "write_target",
]

TABLE_FORMAT = 2  # 2: meta.json holds the SHA-256 of both arrays
# Bump when what a ruleset means changes (engine/player.py, the turn DP, the state
# encoding): tables of an older model would silently disagree with today's rules.
MODEL_VERSION = 2  # 2: a pit entry above the pit is stored as low - unit (one state per situation)
ARRAYS = ("values.npy", "states.npy")
FIXED32 = "fixed32"  # values_encoding of a 32-bit fixed-point table
FIXED32_SCALE = 2**32 - 1  # q = round(v * scale): v in [0, 1], error at most 1 / (2 scale) = 1.2e-10
FIXED32_BOUND = 0.5 / FIXED32_SCALE + 1e-15  # the most encoding_error a table may claim (rounding's bound)


def shipped_tables() -> Path:
    """The tables shipped with the package: the repository's ``tables/``, installed as
    the subpackage ``thousand.shipped_tables`` and found through its resources."""
    return Path(str(resources.files("thousand.shipped_tables")))


def user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "thousand" / "tables"


def search_path(explicit: str | os.PathLike | None) -> list[Path]:
    """Where tables are looked for, in order."""
    out = []
    env = os.environ.get("THOUSAND_TABLES")
    if explicit:
        out.append(Path(explicit))
    elif env:
        out.append(Path(env))
    out.append(shipped_tables())
    out.append(user_cache())
    return out


def write_target(explicit: str | os.PathLike | None) -> Path:
    """Where a newly solved table is written: the explicit directory, else the user cache."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("THOUSAND_TABLES")
    return Path(env) if env else user_cache()


def folder_name(rs: Ruleset, objective: str) -> str:
    return f"{rs.hash}-{objective}"


@dataclass
class Table:
    """A loaded table: ``values`` (float64: memory-mapped, or decoded from fixed point),
    ``states``, ``meta`` and where it lives."""

    path: Path
    meta: dict
    values: np.ndarray
    states: np.ndarray
    index: dict | None = None  # player state -> its row, decoded once while the states were checked

    @property
    def exact(self) -> bool:
        """Whether the values are the solver's float64 ones (not rounded to fixed point)."""
        return self.meta.get("values_encoding", "float64") == "float64"

    @property
    def encoding_error(self) -> float:
        """The largest difference between a stored value and the solved one (0 if exact)."""
        return float(self.meta.get("encoding_error", 0.0))


# one row of states.npy per value T[(n, m)][b, j]: n players still to play after the
# holders, m holders, b the best hand's strength, j the holder's place
POKER_FIELDS = ("after", "holders", "hand", "place")


def state_fields(objective: str) -> tuple[str, ...]:
    """The columns of ``states.npy`` for an objective (poker dice has its own situations)."""
    return POKER_FIELDS if table_kind(objective)[0].state_fields == "poker" else FIELDS


def save_table(
    root: Path,
    rs: Ruleset,
    objective: str,
    values: np.ndarray,
    states: np.ndarray,
    extra: dict,
    encoding: str = "float64",
) -> Path:
    """Write a table atomically under ``root``; returns its folder. ``encoding``:
    ``"float64"`` or :data:`FIXED32` (win probabilities only; meta.json records the
    largest rounding error as ``encoding_error``)."""
    final = root / folder_name(rs, objective)
    values = np.ascontiguousarray(values, dtype=np.float64)
    states = np.ascontiguousarray(states, dtype=np.int32)
    coded = {"values_encoding": "float64", "values_dtype": "float64"}
    if encoding == FIXED32:
        if _value_range(objective) != (0.0, 1.0):
            raise TableError(
                _("a {0} table cannot be stored in fixed point (its values are not in [0, 1])").format(objective)
            )
        q = np.rint(np.clip(values, 0.0, 1.0) * FIXED32_SCALE).astype(np.uint32)
        coded = {
            "values_encoding": FIXED32,
            "values_dtype": "uint32",
            "encoding_error": float(np.max(np.abs(_decode(q) - values), initial=0.0)),
        }
        values = q
    elif encoding != "float64":
        raise TableError(_("unknown table encoding {0!r}").format(encoding))
    meta = {
        "format": TABLE_FORMAT,
        "model_version": MODEL_VERSION,
        "solver_version": __version__,
        "objective": objective,
        "ruleset_hash": rs.hash,
        "ruleset": rs.to_mapping(),
        "state_fields": list(state_fields(objective)),
        "values_shape": list(values.shape),
        **coded,
        "states_shape": list(states.shape),
        "states_dtype": "int32",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    # what the arrays are is this function's to say, whatever ``extra`` holds
    meta = {**extra, **meta}
    try:
        root.mkdir(parents=True, exist_ok=True)
        remove_leftovers(root, final.name)
        tmp = Path(tempfile.mkdtemp(prefix=_temporary_prefix(final.name), suffix=".tmp", dir=root))
    except OSError as exc:
        raise TableError(_("cannot write tables to {0}: {1}").format(root, exc.strerror or exc)) from None
    try:
        np.save(tmp / "values.npy", values, allow_pickle=False)
        np.save(tmp / "states.npy", states, allow_pickle=False)
        meta["sha256"] = {name: file_sha256(tmp / name) for name in ARRAYS}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=_temporary_prefix(final.name), suffix=".old", dir=root))
            os.rename(final, old / "t")
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise TableError(_("cannot write the table to {0}: {1}").format(root, exc.strerror or exc)) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


# a write in progress: .<table folder>.<pid of the writer>.<random>.tmp (or .old, the table it
# replaces); one whose writer is gone was interrupted (a kill, a power cut) and is only waste
TEMPORARY = re.compile(r"\.(?P<table>[0-9a-f]{16}-[a-z]+[0-9]*)\.(?:(?P<pid>[0-9]+)\.)?[^/]*")


def _temporary_prefix(table: str) -> str:
    return f".{table}.{os.getpid()}."


def _writer_alive(pid: str | None) -> bool:
    if pid is None:  # named before writers signed their folders: no writer can still hold it
        return False
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


@dataclass
class Leftover:
    """The folder of a table write that never finished (its writer is gone)."""

    path: Path
    table: str
    bytes: int


def leftovers(root: Path, table: str | None = None) -> list[Leftover]:
    """The folders under ``root`` of interrupted table writes (``table``'s alone, if given):
    named by :func:`save_table` after the table and the writer's process, which is gone."""
    out = []
    try:
        entries = list(Path(root).iterdir())
    except OSError:
        return out
    for p in entries:
        m = TEMPORARY.fullmatch(p.name)
        if m is None or not p.is_dir() or (table is not None and m["table"] != table) or _writer_alive(m["pid"]):
            continue
        size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        out.append(Leftover(p, m["table"], size))
    return out


def remove_leftovers(root: Path, table: str | None = None) -> list[Leftover]:
    """Remove :func:`leftovers` (a solve does so for its own table before it starts); those removed."""
    gone = leftovers(root, table)
    for left in gone:
        shutil.rmtree(left.path, ignore_errors=True)
    return gone


def _decode(q: np.ndarray) -> np.ndarray:
    """float64 values of a fixed-point array."""
    return q.astype(np.float64) / FIXED32_SCALE


def _value_range(objective: str) -> tuple[float, float]:
    obj = table_kind(objective)[0]
    return obj.low, obj.high


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes (read in chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


TABLE_NAME = re.compile(r"[0-9a-f]{16}-[a-z]+[0-9]*")
# the range of each stored objective's values (the registry's: thousand.base.objectives)
VALUE_RANGE = {name: (o.low, o.high) for name, o in REGISTRY.items() if o.stored}
PLAYERS = re.compile(r"players([0-9]+)")


def load_table(folder: Path, rs: Ruleset, objective: str) -> Table:
    """Load and check one table folder; any mismatch or damage is a :class:`TableError`.

    The checks, in order: meta.json names this table (:func:`_check_header`), the ruleset
    stored beside the values is the one asked for, the arrays are the ones that were solved
    (their checksums), their shapes and types are meta.json's, the states are these rules'
    states, the values lie in their objective's range, and what the objective's kind of
    table holds besides (:func:`_check_kind`)."""
    meta = _read_meta(folder)
    _check_header(folder, meta, rs, objective)
    repair = _repair(rs, objective, meta)
    _check_stored_ruleset(folder, meta, rs, repair)
    _check_checksums(folder, meta, repair)
    values, states = _load_arrays(folder, meta, objective, repair)
    player_states = table_kind(objective)[0].state_fields == "player"
    index = _check_states(folder, meta, states, rs, repair) if player_states else None
    values = _decoded_values(folder, meta, values, repair)
    lo, hi = _value_range(objective)
    if not np.all(np.isfinite(values)) or (values.size and (values.min() < lo - 1e-9 or values.max() > hi + 1e-9)):
        raise TableError(_("table {0}: values outside [{1}, {2}] or not finite; {3}").format(folder, lo, hi, repair))
    _check_kind(folder, meta, values, states, rs, objective, repair)
    return Table(folder, meta, values, states, index)


def _read_meta(folder: Path) -> dict:
    try:
        meta = load_json((folder / "meta.json").read_bytes(), "meta.json")
    except (OSError, InputError) as exc:
        raise TableError(_("table {0}: unreadable meta.json ({1})").format(folder, exc.__class__.__name__)) from None
    if not isinstance(meta, dict):
        raise TableError(_("table {0}: meta.json is not an object").format(folder))
    return meta


def _check_header(folder: Path, meta: dict, rs: Ruleset, objective: str) -> None:
    """meta.json is of this format and model, names this ruleset's hash, this objective and
    its state encoding."""
    if meta.get("format") != TABLE_FORMAT:
        raise TableError(
            _("table {0}: format {1!r}, this solver reads {2}").format(folder, meta.get("format"), TABLE_FORMAT)
        )
    if meta.get("model_version") != MODEL_VERSION:
        raise TableError(
            _("table {0} was made by solver model {1!r}, this is {2}: solve again with --force").format(
                folder, meta.get("model_version"), MODEL_VERSION
            )
        )
    if meta.get("ruleset_hash") != rs.hash:
        raise TableError(
            _("table {0} was made for ruleset {1!r}, not {2}").format(folder, meta.get("ruleset_hash"), rs.hash)
        )
    if meta.get("objective") != objective:
        raise TableError(
            _("table {0} holds objective {1!r}, not {2!r}").format(folder, meta.get("objective"), objective)
        )
    if meta.get("state_fields") != list(state_fields(objective)):
        raise TableError(_("table {0}: unknown state encoding").format(folder))


def _check_checksums(folder: Path, meta: dict, repair: str) -> None:
    """Both arrays are, byte for byte, the ones whose SHA-256 meta.json holds."""
    sums = meta.get("sha256")
    if not isinstance(sums, dict):
        raise TableError(_("table {0}: meta.json has no checksums; {1}").format(folder, repair))
    for name in ARRAYS:
        try:
            ok = file_sha256(folder / name) == sums.get(name)
        except OSError as exc:
            raise TableError(
                _("table {0}: cannot read {1} ({2}); {3}").format(folder, name, exc.strerror or exc, repair)
            ) from None
        if not ok:
            raise TableError(
                _("table {0}: {1} is not the array that was solved (damaged or edited); {2}").format(
                    folder, name, repair
                )
            )


def _load_arrays(folder: Path, meta: dict, objective: str, repair: str) -> tuple[np.ndarray, np.ndarray]:
    """The values (memory-mapped, as stored) and the states, of the shapes and types meta.json gives."""
    try:
        values = np.load(folder / "values.npy", mmap_mode="r", allow_pickle=False)
        states = np.load(folder / "states.npy", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:  # an empty file is an EOFError
        raise TableError(
            _("table {0}: damaged arrays ({1}); {2}").format(folder, exc.__class__.__name__, repair)
        ) from None
    encoding = meta.get("values_encoding", "float64")
    stored = {"float64": np.float64, FIXED32: np.uint32}.get(encoding)
    if stored is None or (encoding == FIXED32 and _value_range(objective) != (0.0, 1.0)):
        raise TableError(_("table {0}: unknown values encoding {1!r}").format(folder, encoding))
    if (
        list(values.shape) != meta.get("values_shape")
        or values.dtype != stored
        or list(states.shape) != meta.get("states_shape")
        or states.dtype != np.int32
        or states.ndim != 2
        or states.shape[1] != len(state_fields(objective))
    ):
        raise TableError(_("table {0}: arrays do not match meta.json").format(folder))
    return values, states


def _decoded_values(folder: Path, meta: dict, values: np.ndarray, repair: str) -> np.ndarray:
    """float64 values: as stored, or decoded from fixed point within meta's ``encoding_error``."""
    if meta.get("values_encoding", "float64") != FIXED32:
        return values
    err = meta.get("encoding_error")
    if not isinstance(err, (int, float)) or not 0 <= err <= FIXED32_BOUND:
        raise TableError(_("table {0}: no valid encoding_error in meta.json; {1}").format(folder, repair))
    return _decode(values)


def _check_kind(folder: Path, meta: dict, values, states, rs: Ruleset, objective: str, repair: str) -> None:
    """What each kind of table holds beyond values and states (its objective's check in
    the registry): an equal_turns table its seat and last-turn horizon, an N-player table
    its players and certificate, a geometric table its grid."""
    obj, players = table_kind(objective)
    obj.check_table(folder, meta, values, states, rs, players, repair)


def _check_horizon(folder: Path, meta: dict, rs: Ruleset) -> None:
    """equal_turns: the final-total horizon the values (the duel) or the advice's
    first-seat turns (geometric, N players) assume."""
    horizon = meta.get("last_turn_horizon")
    if rs.equal_turns and (not isinstance(horizon, int) or horizon < rs.goal or horizon % rs.unit):
        raise TableError(_("table {0}: no valid last_turn_horizon in meta.json").format(folder))


def check_duel_table(folder: Path, meta: dict, values, states, rs: Ruleset, players, repair: str) -> None:
    """A duel table: with equal_turns, values[seat, mover, opponent] and the horizon."""
    m = states.shape[0]
    if rs.equal_turns and values.shape != (2, m, m):
        raise TableError(
            _("table {0}: an equal_turns duel table holds (2, {1}, {2}) values, not {3}").format(
                folder, m, m, tuple(values.shape)
            )
        )
    _check_horizon(folder, meta, rs)


def check_players_table(folder: Path, meta: dict, values, states, rs: Ruleset, players: int, repair: str) -> None:
    """A table of N players: (seats * m**N, N) chances whose rows sum to 1, a certificate."""
    from thousand.solvers.nplayer import seat_count

    _check_horizon(folder, meta, rs)
    _check_players(folder, meta, values, states, players, repair, seat_count(rs, players))


def check_geometric_table(folder: Path, meta: dict, values, states, rs: Ruleset, players, repair: str) -> None:
    """A geometric table: one column per grid value of meta.json (and the horizon)."""
    _check_horizon(folder, meta, rs)
    m = states.shape[0]
    grid = meta.get("grid")
    grid_ok = isinstance(grid, list) and bool(grid) and values.shape == (m, len(grid))
    if not grid_ok or not all(isinstance(g, (int, float)) and g >= 1 for g in grid) or sorted(grid) != grid:
        raise TableError(
            _("table {0}: a geometric table holds one column per grid value of meta.json; {1}").format(folder, repair)
        )


def _repair(rs: Ruleset, objective: str, meta: dict) -> str:
    """How to mend a table that fails a check: the command that solves it again."""
    obj, players = table_kind(objective)
    if not obj.options:  # solved when first needed (the geometric table, by duel advice)
        return "delete the folder: the next advice that needs it solves it again"
    again = obj.solve_options(players if players is not None else meta.get("players"))
    return (
        f"solve it again with `thousand solve {rs.name} {again} --force` (and the --set "
        "options it was solved with), or delete the folder"
    )


def _check_stored_ruleset(folder: Path, meta: dict, rs: Ruleset, repair: str) -> None:
    """The ruleset written in full beside the values must be the one asked for, whatever
    the ``ruleset_hash`` field says (a table copied into another ruleset's folder with only
    that field edited is refused here)."""
    from thousand.rules.ruleset import ruleset_from_mapping

    try:
        stored = ruleset_from_mapping(meta["ruleset"])
    except Exception:  # a missing or malformed ruleset: any way it fails, the table is not used
        raise TableError(
            _("table {0}: meta.json holds no ruleset this version reads; {1}").format(folder, repair)
        ) from None
    if stored.hash != rs.hash:
        raise TableError(
            _("table {0} holds the values of other rules ({1}, hash {2}), not of {3} (hash {4}); {5}").format(
                folder, stored.name, stored.hash, rs.name, rs.hash, repair
            )
        )


def _check_states(folder: Path, meta: dict, states: np.ndarray, rs: Ruleset, repair: str) -> dict:
    """The states of a table must be the ruleset's: as many as meta.json says, each one a
    state these rules can hold (a score from the floor to below the goal, on the unit, its
    counters as the rules keep them at that score), no state twice, and every state a game
    of these rules can start a turn in (the seeds of the state space) among them. A table
    of a smaller goal lacks seeds; one of a larger goal has scores these rules cannot hold.
    Returns each state's row (:attr:`Table.index`)."""
    from thousand.engine.player import Moves
    from thousand.engine.states import decode, seeds

    count = meta.get("player_states")
    if count is not None and count != states.shape[0]:
        raise TableError(
            _("table {0}: {1} states where meta.json says {2}; {3}").format(folder, states.shape[0], count, repair)
        )
    moves = Moves(rs)
    held: dict = {}
    for i, row in enumerate(states):
        x = decode(row)
        if not (rs.floor <= x.score < rs.goal and x.score % rs.unit == 0) or moves.normalise(x) != x or x in held:
            raise TableError(
                _("table {0}: the state {1} is not one of these rules' states; {2}").format(
                    folder, tuple(int(v) for v in row), repair
                )
            )
        held[x] = i
    missing = next((x for x in seeds(moves) if x not in held), None)
    if missing is not None:
        raise TableError(
            _("table {0}: no value for the state {1}, which these rules can reach; {2}").format(
                folder, tuple(missing), repair
            )
        )
    return held


def _check_players(folder: Path, meta: dict, values, states, players: int, repair: str, seats: int = 1) -> None:
    """An N-player table: (seats * m**N, N) values whose rows sum to 1, and an equilibrium
    certificate."""
    from thousand.solvers.nplayer import CERTIFICATE

    m = states.shape[0]
    rows = seats * m**players
    if meta.get("players") != players or values.shape != (rows, players):
        raise TableError(
            _("table {0}: a table of {1} players holds ({2}, {1}) values, not {3}").format(
                folder, players, rows, tuple(values.shape)
            )
        )
    cert = meta.get("certificate")
    if not isinstance(cert, (int, float)) or not 0 <= cert <= CERTIFICATE:
        raise TableError(
            _("table {0}: no equilibrium certificate of at most {1} in meta.json; {2}").format(
                folder, CERTIFICATE, repair
            )
        )
    for lo in range(0, values.shape[0], 1 << 20):
        if np.max(np.abs(values[lo : lo + (1 << 20)].sum(axis=1) - 1.0)) > 1e-9:
            raise TableError(_("table {0}: the players' chances do not sum to 1; {1}").format(folder, repair))


def find_table(rs: Ruleset, objective: str, explicit: str | os.PathLike | None) -> Table | None:
    """The first exact table for (rs, objective) on the search path, else the first
    fixed-point one (a shipped table stays in use until an exact one is solved into the
    cache); a damaged or mismatched one is an error, not skipped, so it is never
    silently replaced."""
    rounded = None
    for root in search_path(explicit):
        folder = root / folder_name(rs, objective)
        if folder.is_dir():
            table = load_table(folder, rs, objective)
            if table.exact:
                return table
            rounded = rounded or table
    return rounded


@dataclass
class StoredTable:
    """A table folder found on the search path, and what its checks say of it."""

    path: Path
    where: str  # "explicit", "shipped" or "cache"
    ruleset: str
    objective: str
    bytes: int
    problem: str  # "" when it loads and passes every check
    encoding: str = "float64"  # or fixed32 (values within meta's encoding_error of the solved ones)

    def to_json(self) -> dict:
        return {
            "path": str(self.path),
            "where": self.where,
            "ruleset": self.ruleset,
            "objective": self.objective,
            "bytes": self.bytes,
            "encoding": self.encoding,
            "ok": not self.problem,
            "problem": self.problem or None,
        }


def stored_tables(explicit: str | os.PathLike | None = None) -> list[StoredTable]:
    """Every table folder on the search path, each loaded and checked against the ruleset
    its meta.json names (:func:`load_table`)."""
    from thousand.rules.ruleset import ruleset_from_mapping

    if explicit and not Path(explicit).is_dir():
        raise TableError(_("no tables folder {0}").format(explicit))
    out = []
    shipped, cache = shipped_tables(), user_cache()
    for root in search_path(explicit):
        where = "shipped" if root == shipped else "cache" if root == cache else "explicit"
        if not root.is_dir():
            continue
        # table folders are named <ruleset hash>-<objective> (a package's __pycache__ is not one)
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and TABLE_NAME.fullmatch(p.name)):
            size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
            name, objective, problem, encoding = "?", "?", "", "?"
            try:
                meta = _read_meta(folder)
                objective = str(meta.get("objective"))
                encoding = str(meta.get("values_encoding", "float64"))
                rs = ruleset_from_mapping(meta["ruleset"])
                name = rs.name
                load_table(folder, rs, objective)
            except TableError as exc:
                problem = str(exc)
            except Exception as exc:  # an unreadable meta.json, a ruleset this version rejects
                problem = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            out.append(StoredTable(folder, where, name, objective, size, problem, encoding))
    return out
