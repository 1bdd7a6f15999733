"""Solve an objective for a ruleset, or load its table: the one entry point that the
Python API, the CLI, the advisor and the evaluator use (:func:`solve`), and the one
result type of every objective (:class:`Solution`).

Objectives (docs/solver.md has the Bellman equations):

* ``turn`` -- the most points one turn banks on average, ``max E[t at the bank]``
  (a bust, a mid-turn dump and an overshoot bank nothing); no table.
* ``race`` -- the fewest expected turns to win alone, ``N(x) = 1 + E[N(x')]``;
  a table of ``N`` per player state.
* ``duel`` -- the probability that the player to move wins, both playing
  optimally, ``P(x, y)`` per pair of player states (with ``equal_turns``, per seat).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from thousand import kernel
from thousand.base.errors import StateError, TableError, ThousandError
from thousand.base.i18n import _
from thousand.base.objectives import CHOSEN, REGISTRY, table_kind
from thousand.base.objectives import objective as objective_named
from thousand.base.progress import Progress, duration_text, peak_memory_mb
from thousand.engine.player import Moves, PlayerState
from thousand.rules.ruleset import Ruleset
from thousand.solvers.advice import nearer

from .files import Table, find_table, folder_name, remove_leftovers, save_table, write_target

__all__ = [
    "DUEL_TURNS_PER_PAIR",
    "METHODS",
    "OBJECTIVES",
    "RACE_STATE_ROWS_PER_S",
    "DuelTooLarge",
    "Solution",
    "estimate",
    "loaded",
    "note_rounding",
    "player_table_meta",
    "solve",
    "solve_duel_on_cluster",
    "solve_duel_to_store",
    "solve_objective",
]

# the methods of each objective a user chooses, the default first (docs/solver.md; the registry's)
METHODS = {name: REGISTRY[name].methods for name in CHOSEN}
OBJECTIVES = CHOSEN


@dataclass
class Solution:
    """A solved objective for a ruleset ``rs``: the same fields for every objective.

    Attributes
    ----------
    objective : str
        ``"turn"``, ``"race"`` or ``"duel"``.
    values : numpy.ndarray
        ``turn``: the expected points of one turn from the initial state, shape (1,);
        ``race``: expected turns per player state; ``duel``: P(mover wins) per
        (mover state, opponent state), with ``equal_turns`` per (seat, mover, opponent).
    iterations : int
        Sweeps (race), turn-DP passes over all pairs (duel), horizon doublings (turn).
    residual : float
        The final Bellman residual (turn: the change at the last doubling).
    seconds : float
        Time the solve took (when it was solved, not when it was loaded).
    method : str
        How it was solved (:data:`METHODS`).
    info : dict
        The extras: ``rounds`` and ``sweeps`` of policy iteration, ``fallback``, the
        ``interface`` pairs of a duel's interface passes (docs/solver.md), the
        equal_turns ``horizon``, the ``kernel``, ``states``, ``player_states``,
        ``peak_memory_mb``, ``table`` (its folder) -- those that apply.
    solved_now : bool
        Whether it was solved by this call rather than loaded.
    """

    rs: Ruleset
    objective: str
    table: Table | None
    solved_now: bool
    turn: tuple | None = None  # objective turn: (value, T, iterations, change, seconds)
    rate: object = None  # objective rate: a thousand.solvers.rate.RateSolution
    index: dict = field(init=False)

    def __post_init__(self):
        self.index = {} if self.table is None else (self.table.index or {})

    # ---- the common fields

    @property
    def meta(self) -> dict:
        return self.table.meta if self.table is not None else {}

    @property
    def values(self) -> np.ndarray:
        if self.rate is not None:
            return np.array([self.rate.gain])
        return np.array([self.turn[0]]) if self.table is None else self.table.values

    @property
    def iterations(self) -> int:
        if self.rate is not None:
            return self.rate.rounds
        return int(self.turn[2] if self.table is None else self.meta["iterations"])

    @property
    def residual(self) -> float:
        if self.rate is not None:
            return self.rate.change
        return float(self.turn[3] if self.table is None else self.meta["residual"])

    @property
    def seconds(self) -> float:
        if self.rate is not None:
            return self.rate.seconds
        return float(self.turn[4] if self.table is None else self.meta["solve_seconds"])

    @property
    def method(self) -> str:
        return self.meta.get("method", objective_named(self.objective).methods[0])

    @property
    def info(self) -> dict:
        if self.rate is not None:
            r = self.rate
            return {
                "horizon_units": r.T,
                "kernel": kernel.IMPLEMENTATION,
                "counters": r.counters,
                "relative_values": r.relative.tolist(),
                "expected_points": r.expected_points.tolist(),
                "zero_probability": r.zero_probability.tolist(),
            }
        if self.table is None:
            return {"horizon_units": self.turn[1], "kernel": kernel.IMPLEMENTATION}
        m = self.meta
        names = {
            "policy_rounds": "rounds",
            "linear_sweeps": "sweeps",
            "policy_fallback": "fallback",
            "interface_pairs": "interface",
            "last_turn_horizon": "horizon",
            "kernel": "kernel",
            "states": "states",
            "player_states": "player_states",
            "peak_memory_mb": "peak_memory_mb",
            "cluster": "cluster",
        }
        out = {new: m[old] for old, new in names.items() if m.get(old) is not None}
        out["table"] = str(self.table.path)
        return out

    # ---- values of states

    def state_index(self, x: PlayerState) -> int:
        try:
            return self.index[x]
        except KeyError:
            raise StateError(_("no such game state in the table: {0}").format(x.describe(self.rs))) from None

    @property
    def seated(self) -> bool:
        """Whether the values depend on the mover's seat (an equal_turns duel:
        ``values[seat, mover, opponent]``, seat 0 first, 1 second)."""
        return self.table is not None and self.table.values.ndim == 3

    @property
    def last_turn_horizon(self) -> int | None:
        """An equal_turns duel's horizon of final totals (:func:`thousand.solvers.lastturn.last_turn_horizon`)."""
        h = self.meta.get("last_turn_horizon")
        return None if h is None else int(h)

    def opponent_values(self, seat: int | None = None) -> np.ndarray:
        """A duel's ``P[opponent, mover]`` as the turn of a mover in ``seat`` reads it: the
        other seat's values with equal_turns, else the table's."""
        v = self.table.values
        return v[1 - seat] if v.ndim == 3 else v

    def value(self, x: PlayerState, y: PlayerState | None = None, seat: int | None = None) -> float:
        """The value of state ``x``: expected points of its turn (turn), expected turns
        (race), or P(win) of mover ``x`` against ``y`` (duel; with equal_turns, mover
        ``x`` in ``seat``, 0 first or 1 second); rate: ``g + h(c)``, the value of the best
        turn from ``x``'s zero-turn counter ``c`` (its points plus the relative value after)."""
        if self.rate is not None:
            return self.rate.gain + float(self.rate.relative[Moves(self.rs).check(x).bolts])
        if self.table is None:
            from thousand.solvers.turn import expected_turn_points

            Moves(self.rs).check(x)
            return expected_turn_points(self.rs, x).value
        v = self.table.values
        if v.ndim >= 2 and y is None:
            raise StateError(_("a duel value needs the opponent's state"))
        if v.ndim == 3:
            if seat not in (0, 1):
                raise StateError(_("an equal_turns duel value needs the mover's seat (0 or 1)"))
            return float(v[seat, self.state_index(x), self.state_index(y)])
        if v.ndim == 2:
            return float(v[self.state_index(x), self.state_index(y)])
        return float(v[self.state_index(x)])

    def start_value(self) -> float:
        """The value of the initial state: the expected points of the first turn (turn),
        the expected turns to win alone (race), P(first player wins) (duel), the points per
        turn in the long run (rate)."""
        if self.rate is not None:
            return float(self.rate.gain)
        if self.table is None:
            return float(self.turn[0])
        x0 = Moves(self.rs).initial()
        return self.value(x0, x0 if self.table.values.ndim >= 2 else None, 0 if self.seated else None)

    def advise(
        self,
        me: PlayerState,
        opponent: PlayerState | None = None,
        *,
        turn: int = 0,
        dice: int | None = None,
        roll=None,
        seat: int | None = None,
    ):
        """The value of every option of a decision (:class:`thousand.solvers.advice.Advice`).

        Parameters
        ----------
        me, opponent : PlayerState
            The player to move (at the start of the turn) and, for a duel, the opponent.
        turn : int
            Points of this turn so far.
        dice : int, optional
            Dice about to be rolled (default: all); or give ``roll``.
        roll : sequence of int, optional
            The faces thrown, to choose the dice to set aside.
        seat : int, optional
            equal_turns duels: 0 if ``me`` moves first in each round, 1 if second.
        """
        rs, obj = self.rs, objective_named(self.objective)
        me = Moves(rs).check(me)
        roll = tuple(roll) if roll is not None else None
        opponents = ()
        if obj.opponents:
            if opponent is None:
                raise StateError(_("{0} advice needs the opponent's state").format(obj.name))
            opponent = Moves(rs).check(opponent)
            Moves(rs).check_pair(me, opponent)
            opponents = (opponent,)
        adv = obj.advisor(self, opponents, seat)
        adv.engine.check_reachable(adv.engine.state(me, turn, dice, roll))
        return adv.advise(me, turn, dice, roll)

    def fair_compensation(self) -> tuple[int, float] | None:
        """The extra starting points for the second player that bring the duel
        closest to 50/50: the ``c`` minimising |P(first player wins) - 1/2| when
        the second player starts with ``c`` points, and that probability (the
        smallest such ``c`` where values tie: :func:`nearer`).

        P(first wins) = P(x0, y_c) with x0 the initial state (first to move) and
        y_c the opened state with score c; scores that are not plain states of
        the table (dump scores, pits with roll-back) are skipped."""
        if self.table is None or self.table.values.ndim < 2:
            return None
        moves = Moves(self.rs)
        x0 = moves.initial()
        best = None
        for c in range(0, self.rs.goal, self.rs.unit):
            y = moves.normalise(PlayerState(c, opened=True), before=None) if c else x0
            if y not in self.index:
                continue
            p = self.value(x0, y, 0 if self.seated else None)
            if best is None or nearer(p, best[1], 0.5):
                best = (c, p)
            if p < 0.5 - 0.25:  # far past the balance point: nothing closer beyond
                break
        return best

    def summary(self) -> dict:
        if self.rate is not None:
            return {
                "start_value": self.start_value(),
                "unit": self.rs.unit,
                **self.info,
                "iterations": self.iterations,
                "residual": self.residual,
                "method": self.method,
                "solve_seconds": round(self.seconds, 6),
            }
        if self.table is None:
            return {
                "start_value": self.start_value(),
                "unit": self.rs.unit,
                "horizon_units": self.turn[1],
                "iterations": self.iterations,
                "residual": self.residual,
                "method": self.method,
                "kernel": kernel.IMPLEMENTATION,
                "solve_seconds": round(self.seconds, 6),
            }
        m = self.meta
        out = {
            "start_value": self.start_value(),
            "states": m["states"],
            "iterations": m["iterations"],
            "residual": m["residual"],
            "solve_seconds": m["solve_seconds"],
            "method": self.method,
            "kernel": m.get("kernel"),
            "table": str(self.table.path),
            "solved_now": self.solved_now,
        }
        if "peak_memory_mb" in m:
            out["peak_memory_mb"] = m["peak_memory_mb"]
            out["player_states"] = m["player_states"]
        for key in ("policy_rounds", "linear_sweeps", "policy_fallback", "interface_pairs", "started_from"):
            if m.get(key) is not None:
                out[key] = m[key]
        out["values_encoding"] = m.get("values_encoding", "float64")
        out["encoding_error"] = self.table.encoding_error
        fair = self.fair_compensation()
        if fair is not None:
            out["fair_compensation"] = {"points": fair[0], "p_first": fair[1]}
        return out

    def describe(self, rs: Ruleset | None = None) -> str:
        rs = rs or self.rs
        if self.rate is not None:
            r = self.rate
            lines = [
                f"{rs.name}: the most points per turn in the long run = {r.gain:.6f} "
                f"({r.rounds} policy rounds, {self.seconds:.3f} s)"
            ]
            if r.counters > 1:
                lines.append(
                    f"  a strategy per zero-turn counter (the third zero turn in a row costs {rs.bolts.penalty})"
                    if rs.bolts.consecutive
                    else f"  a strategy per zero-turn counter (every {rs.bolts.limit}th zero turn costs "
                    f"{rs.bolts.penalty})"
                )
            for c in range(r.counters):
                lines.append(
                    f"  after {c} zero turn{'' if c == 1 else 's'}: this turn's expected points "
                    f"{r.expected_points[c]:.6f}, P(zero turn) {r.zero_probability[c]:.6f}, "
                    f"relative value {r.relative[c]:+.6f}"
                )
            if rs.open_min:
                lines.append(
                    f"  (an opened player: the opening of {rs.open_min} comes once and does not change the long run)"
                )
            return "\n".join(lines)
        if self.table is None:
            return (
                f"{rs.name}: the best expected score of one turn from the start is "
                f"{self.start_value():.6f} points ({kernel.IMPLEMENTATION} kernel, {self.seconds:.3f} s)"
            )
        m = self.meta
        what = objective_named(self.objective).start
        how = "solved now" if self.solved_now else "from the stored table"
        fair = self.fair_compensation()
        fair_line = (
            f"  fair compensation: the second player starts with {fair[0]} points "
            f"-> P(first player wins) = {fair[1]:.6f}\n"
            if fair
            else ""
        )
        rounded = "" if self.table.exact else "  " + self.rounding_note() + "\n"
        return (
            f"{rs.name}: {what} = {self.start_value():.12f}\n"
            f"  {m['states']} states, {m['iterations']} sweeps, residual {m['residual']:.2e}, "
            f"{m['solve_seconds']:.2f} s ({how})\n{rounded}{fair_line}  table: {self.table.path}"
        )

    def rounding_note(self, command: bool = True) -> str:
        """What a fixed-point table's values are worth, and (``command``) the command that
        solves the exact ones (not on the web page, where nobody can type it)."""
        note = _("values stored in 32-bit fixed point, within {err} of the solved ones").format(
            err=f"{self.table.encoding_error:.1e}"
        )
        if not command:
            return note
        return (
            note
            + " "
            + _("(the exact table: `{cmd}`, which starts from these)").format(
                cmd=f"thousand solve {self.rs.name} {objective_named(self.objective).solve_options()} --force"
            )
        )


def solve(
    rules: Ruleset | str,
    objective: str,
    *,
    method: str | None = None,
    tables: str | os.PathLike | None = None,
    force: bool = False,
    progress: bool = False,
    encoding: str = "float64",
    cluster: str | None = None,
    checkpoint: str | os.PathLike | None = None,
) -> Solution:
    """Solve ``objective`` for a ruleset, or load its stored table.

    Parameters
    ----------
    rules : Ruleset or str
        A ruleset, a preset name or a path to a TOML file (see :func:`thousand.load_ruleset`).
    objective : {"turn", "race", "duel", "rate"}
        What to optimise (see the module docstring).
    method : str, optional
        How to solve (:data:`METHODS`; default: the first). A stored table is used
        whatever the method unless ``force``: every method reaches the same values.
    tables : path, optional
        Where tables are looked up first and written (default: ``THOUSAND_TABLES``,
        the shipped tables, then the user cache).
    force : bool
        Solve again and replace the stored table (atomically).
    progress : bool
        A progress line on stderr while solving.
    encoding : {"float64", "fixed32"}
        How a newly solved table stores its values: float64, or (win probabilities)
        32-bit fixed point, within 1.2e-10 at half the size (the large shipped tables).
    cluster : str, optional
        Solve the duel on Dask workers (``pip install 'thousand[cluster]'``): ``"local:N"``
        starts a local cluster of N worker processes, ``"tcp://HOST:PORT"`` uses a running
        scheduler (docs/distributed.md). The passes method; the same values.
    checkpoint : path, optional
        With ``cluster``: the folder of its checkpoints (default: ``.partial/`` beside the
        table), on a file system every worker can write; a new run goes on from it.

    Returns
    -------
    Solution
    """
    from thousand.rules.ruleset import load_ruleset

    rs = load_ruleset(rules) if isinstance(rules, str) else rules
    if objective not in CHOSEN:
        raise TableError(_("unknown objective {0!r}: one of {1}").format(objective, ", ".join(CHOSEN)))
    obj = REGISTRY[objective]
    method = method or obj.methods[0]
    if method not in obj.methods:
        raise StateError(
            _("the {0} objective is solved by {1}, not {2!r}").format(objective, ", ".join(obj.methods), method)
        )
    if cluster is not None:
        if method not in obj.cluster_methods:
            raise StateError(
                _("--cluster solves the duel by passes, not {0}").format(
                    f"--method {method}" if obj.cluster_methods else obj.solve_options()
                )
            )
        return solve_duel_on_cluster(
            rs, cluster, tables, force=force, progress=progress, checkpoint=checkpoint, encoding=encoding
        )
    if checkpoint is not None:
        raise StateError(_("--checkpoint goes with --cluster"))
    return obj.solve(rs, tables, progress=progress, force=force, method=method, encoding=encoding)


def solve_turn(rs: Ruleset, tables_dir=None, **_how) -> Solution:
    """The ``turn`` objective (the registry's solver): the turn DP to a horizon that settles."""
    from thousand.solvers.turn import expected_turn_points

    t0 = time.perf_counter()
    r = expected_turn_points(rs)
    return Solution(rs, "turn", None, True, (r.value, r.T, r.doublings, r.change, time.perf_counter() - t0))


def solve_rate(rs: Ruleset, tables_dir=None, **_how) -> Solution:
    """The ``rate`` objective (the registry's solver): the average-reward policy iteration."""
    from thousand.solvers.rate import solve_rate as solve_long_run

    return Solution(rs, "rate", None, True, rate=solve_long_run(rs))


# The duel's time is the pairs times one turn DP of the ruleset, timed on this machine
# when the estimate is made, times the work per pair of a whole solve in units of one turn
# DP: measured (docs/solver.md) 0.8 (plain) to 1.7 (farkle) without penalty links (one pass,
# frames), and from 1.9 (classic-nobarrel) to 14 (admission, zilch) with them; on
# 2026-12-04, with the levels' guesses back and the cheaper rounds, plain 0.66, farkle
# 1.3, farkle-cardgames 1.45, classic-nobarrel 1.95, kubiki 2.0, classic 2.2, street and
# classic-open 2.6, admission 9.4 (3.4 by interface passes, the same day).
DUEL_TURNS_PER_PAIR = {False: (0.6, 1.8), True: (1.9, 14.0)}
# classic's race: about 100 s on this project's 2-core machine
RACE_STATE_ROWS_PER_S = 1.5e5


def loaded(rs: Ruleset, objective: str, table: Table):
    """The solution of a table found for ``objective``."""
    obj, players = table_kind(objective)
    if obj.per_players:
        from .players import PlayersSolution

        return PlayersSolution(rs, players, table, solved_now=False)
    return Solution(rs, objective, table, solved_now=False)


def estimate(rs: Ruleset, objective: str) -> dict:
    """What a solve of ``objective`` will cost, known before it starts.

    ``seconds`` is always a (low, high) pair. The race: a lower bound on the player
    states (every playable score with its counters) and a rough time (low = high; 0 for
    objectives that take no noticeable time). The duel: the player states themselves (the closure of
    the seeds under every turn end and every opponent's move, cut off, with
    ``exceeded`` set, as soon as their pairs pass the solver's limit), the pairs and
    bytes of the values, and ``seconds``, a (low, high) range from one turn DP timed now
    and the work per pair measured on the presets. ``ends`` carries the closure for the
    solve that follows."""
    obj, players = table_kind(objective)
    return obj.estimate(rs, players)


def estimate_duel(rs: Ruleset, players: int | None = None) -> dict:
    """:func:`estimate` of the duel: its player states (listed, and kept in ``ends``, up to
    the solver's limit), pairs, bytes and a (low, high) time range."""
    from math import isqrt

    from thousand.engine.states import TooManyStates, closure
    from thousand.solvers.duel import MAX_PAIRS

    rows = max(1, rs.goal // rs.unit)  # totals a turn runs through, at most
    seats = 2 if rs.equal_turns else 1
    out = {"max_pairs": MAX_PAIRS, "exceeded": False, "ends": None}
    try:
        out["ends"] = closure(rs, opponents=True, limit=isqrt(MAX_PAIRS) // seats)
        n = len(out["ends"])
    except TooManyStates as e:
        n, out["exceeded"] = e.count, True
    pairs = seats * n * n
    low, high = DUEL_TURNS_PER_PAIR[_has_penalties(rs)]
    one = kernel.turn_seconds(rs, rows) if not out["exceeded"] else 0.0
    out.update(
        player_states=n, pairs=pairs, bytes=8 * (seats * n) ** 2, seconds=(pairs * one * low, pairs * one * high)
    )
    return out


def estimate_race(rs: Ruleset, players: int | None = None) -> dict:
    """:func:`estimate` of the race: a lower bound on its player states (``at_least``) and a rough time."""
    from thousand.engine.states import seeds

    rows = max(1, rs.goal // rs.unit)
    n = len(seeds(Moves(rs)))
    race = n * rows / 2 * 100 / RACE_STATE_ROWS_PER_S
    return {"player_states": n, "at_least": True, "seconds": (race, race)}


def _has_penalties(rs: Ruleset) -> bool:
    """Whether some penalty can lower a pair's level (then the duel takes many passes)."""
    return bool(
        rs.bolts.limit
        or rs.overtake
        or rs.dump
        or rs.pit_attempts
        or (rs.barrel.kind != "none" and (rs.barrel.attempts or rs.barrel.overshoots or rs.barrel.push_off != "none"))
    )


class DuelTooLarge(TableError):
    """The duel's pairs do not fit the solver (refused before anything is allocated)."""


def _check_size(rs: Ruleset, objective: str, progress: bool) -> dict:
    """Refuse at once what cannot fit; say what a long solve will cost before it starts.
    Returns the :func:`estimate`, its ``expected`` seconds (the high end of a range) added."""
    est = estimate(rs, objective)
    if est.get("exceeded"):
        seats = _(" (equal turns: each seat against the other)") if rs.equal_turns else ""
        raise DuelTooLarge(
            _(
                "{name}: at least {n:,} player states make at least {pairs:,} pairs{seats}, a value "
                "matrix of at least {values:,} values ({gib:,.2f} GiB); the duel solver holds {top:,} "
                "({mb} MB) in memory; --store FILE.npy --memory-mb MB solves it out of "
                "core"
            ).format(
                name=rs.name,
                n=est["player_states"],
                pairs=est["pairs"],
                seats=seats,
                values=est["bytes"] // 8,
                gib=est["bytes"] / 2**30,
                top=est["max_pairs"],
                mb=8 * est["max_pairs"] // 10**6,
            )
        )
    low, high = est["seconds"]
    est["expected"] = high
    if progress and high > 30:
        when = duration_text(high) if high < 1.5 * low else f"{duration_text(low)} to {duration_text(high)}"
        if when.count("minutes") == 2:
            when = when.replace(" minutes to", " to", 1)
        sys.stderr.write(
            f"solving the {objective} of {rs.name}: {est['player_states']:,}"
            f"{'+' if est.get('at_least') else ''} player states, roughly {when} here "
            "(Ctrl-C stops it; nothing is stored until it is done)\n"
        )
        sys.stderr.flush()
    return est


def note_rounding(sol: Solution, adv, command: bool = True):
    """``adv`` (an :class:`thousand.solvers.advice.Advice` from ``sol``), its note saying so when
    the table's values are rounded to fixed point (with the command for the exact ones)."""
    if sol.table is not None and not sol.table.exact:
        adv.note = "; ".join(n for n in (adv.note, sol.rounding_note(command)) if n)
    return adv


def _rounded_table(rs: Ruleset, kind: str, tables_dir: str | None) -> Table | None:
    """The fixed-point table ``kind`` of ``rs`` on the search path, if that is the one there
    is: a solve forced over it starts from its values (docs/solver.md, shipped tables)."""
    try:
        table = find_table(rs, kind, tables_dir)
    except TableError:
        return None  # a damaged table is replaced, not read
    return None if table is None or table.exact else table


def solve_duel_to_store(
    rs: Ruleset, path: str | os.PathLike, memory_mb: float, force: bool = False, progress: bool = True
) -> dict:
    """Solve the duel of ``rs`` out of core (:class:`thousand.solvers.store.ValueStore`): the
    values go to the ``.npy`` file ``path`` (``P[mover, opponent]`` over the solver's
    states; with equal_turns the first seat's states, then the second's), at most
    ``memory_mb`` of them resident at once; no table is stored (a table is read whole).
    The file appears only when the solve is done (it is written beside it, then
    renamed); an existing one is replaced only with ``force``. Interrupted (Ctrl-C), the
    values so far stay beside it (``FILE.npy.partial``, with ``.json`` naming the rules),
    and the same command goes on from them (``force`` starts again). Returns the summary."""
    import shutil

    from thousand.engine.states import build_state_space
    from thousand.solvers.duel import DuelModel, solve_duel
    from thousand.solvers.store import ValueStore

    target = Path(path)
    if target.suffix != ".npy":
        raise TableError(_("--store {0}: the values are a .npy array; give a file name ending in .npy").format(path))
    if not target.parent.is_dir():
        raise TableError(_("--store {0}: folder {1} does not exist").format(path, target.parent))
    if target.exists() and not force:
        raise TableError(_("--store {0} exists; --force replaces it").format(path))
    if not memory_mb > 0:
        raise TableError(_("--memory-mb must be positive, not {0}").format(memory_mb))
    model = DuelModel(rs, space=build_state_space(rs, opponents=True), max_pairs=None)
    need, free = model.n**2 * 8, shutil.disk_usage(target.parent).free
    if need > free:
        raise TableError(
            _("--store {0}: {1:,} states need {2:.2f} GiB for their values, and {3} has {4:.2f} GiB free").format(
                path, model.n, need / 2**30, target.parent, free / 2**30
            )
        )
    partial = target.with_name(target.name + ".partial")
    whose = partial.with_name(partial.name + ".json")
    mine = {"ruleset": rs.name, "ruleset_hash": rs.hash, "states": model.n}
    resume = partial.exists() and not force
    if resume:
        try:
            theirs = json.loads(whose.read_text())
        except (OSError, ValueError):
            theirs = None
        if theirs != mine:
            raise TableError(
                _(
                    "--store {0}: {1} is an interrupted solve of other rules (or has lost its {2}); "
                    "--force starts again over it"
                ).format(path, partial, whose.name)
            )
        if progress:
            sys.stderr.write(_("going on from the values of the interrupted solve in {0}").format(partial) + "\n")
    try:
        store = ValueStore(partial, model.n, int(memory_mb * 2**20), reopen=resume)
    except ThousandError as e:
        if not resume:
            raise
        raise TableError(
            _("--store {0}: the interrupted solve in {1} cannot go on ({2}); --force starts again over it").format(
                path, partial, e
            )
        ) from None
    if not resume:
        whose.write_text(json.dumps(mine))
    bar = Progress(f"solving {rs.name} duel out of core", progress)
    try:
        sol = solve_duel(rs, model=model, progress=bar, store=store)
        x0 = Moves(rs).initial()
        p_first = float(store.P[model.index(x0, 0), model.index(x0, 1 if model.equal_turns else 0)])
        store.close()
    except KeyboardInterrupt:
        store.close()  # its values so far stay for the next run
        if progress:
            sys.stderr.write(
                _("interrupted: the values so far are kept in {0}; the same command goes on from them").format(partial)
                + "\n"
            )
        raise
    except BaseException:
        partial.unlink(missing_ok=True)
        whose.unlink(missing_ok=True)
        raise
    finally:
        bar.close()
    os.replace(partial, target)
    whose.unlink(missing_ok=True)
    return {
        "ruleset": rs.name,
        "ruleset_hash": rs.hash,
        "objective": "duel",
        "store": str(target),
        "store_shape": [model.n, model.n],
        "states": model.pairs,
        "player_states": model.players,
        "equal_turns": model.equal_turns,
        "start_value": p_first,
        "iterations": sol.passes,
        "residual": sol.residual,
        "solve_seconds": round(sol.seconds, 3),
        "memory_mb": memory_mb,
        "peak_memory_mb": peak_memory_mb(),
        "value_meaning": "P(mover wins) for mover state (row) against opponent state (column)"
        + (
            ", a tie counted 1/2; rows and columns are the first seat's states, then the second's"
            if model.equal_turns
            else ""
        ),
    }


def _duel_meta(model) -> dict:
    """What a duel table's meta says of its values, however it was solved: the pairs, the
    player states, what a value means and, with equal_turns, the last turn's horizon."""
    meta = {
        "states": model.pairs,
        "player_states": model.players,
        "value_meaning": "P(mover wins) for mover state (row) against opponent state (column)",
    }
    if model.equal_turns:
        meta["value_meaning"] = (
            "P(mover wins, a tie counted 1/2) for [seat of the mover (0 first, 1 second), mover state, opponent state]"
        )
        meta["last_turn_horizon"] = model.horizon
    return meta


def solve_duel_on_cluster(
    rs: Ruleset,
    cluster: str,
    tables_dir: str | os.PathLike | None = None,
    force: bool = False,
    progress: bool = True,
    checkpoint: str | os.PathLike | None = None,
    encoding: str = "float64",
    checkpoint_seconds: float | None = None,
) -> Solution:
    """The duel table of ``rs`` solved on a Dask cluster (:mod:`thousand.solvers.cluster`), or
    found stored (unless ``force``), by :func:`on_cluster`."""
    from thousand.solvers import cluster as cl

    from .cluster import cluster_meta, on_cluster

    if not force:
        table = find_table(rs, "duel", tables_dir)
        if table is not None:
            return loaded(rs, "duel", table)

    def solve(client, folder, bar, every):
        return cl.solve_duel_on_cluster(
            rs, client, folder, progress=bar.levels, checkpoint_seconds=every, values_path=folder / "values.npy"
        )

    def store(sol):
        model = sol.model
        extra = {
            **_duel_meta(model),
            "iterations": sol.passes,
            "residual": sol.residual,
            "solve_seconds": sol.seconds,
            "kernel": kernel.IMPLEMENTATION,
            "method": "passes",
            "cluster": cluster_meta(cluster, sol),
            "peak_memory_mb": peak_memory_mb(),
        }
        saved = save_table(
            Path(write_target(tables_dir)), rs, "duel", sol.values, model.space.encode(), extra, encoding
        )
        from .files import load_table

        return Solution(rs, "duel", load_table(saved, rs, "duel"), solved_now=True)

    return on_cluster(
        rs, "duel", f"{rs.name} duel", cluster, tables_dir, checkpoint, progress, solve, store, checkpoint_seconds
    )


def solve_objective(
    rs: Ruleset,
    objective: str,
    tables_dir: str | None = None,
    progress: bool = True,
    force: bool = False,
    method: str | None = None,
    encoding: str = "float64",
) -> Solution:
    """The table of ``objective`` (a table kind: ``race``, ``duel``, ``players3``: a
    :class:`thousand.storage.players.PlayersSolution`) for ``rs``: found on the search path, or
    solved now (progress on stderr) and written atomically, by the objective's solver in the
    registry (:mod:`thousand.base.objectives`)."""
    obj, players = table_kind(objective)
    how = {"progress": progress, "force": force, "method": method, "encoding": encoding}
    return obj.solve(rs, tables_dir, **how, **({"players": players} if obj.per_players else {}))


def _stored(rs: Ruleset, kind: str, tables_dir, compute, progress, force, method, encoding) -> Solution:
    """The table ``kind`` of ``rs`` found on the search path, or ``compute(rs, est, bar,
    method, seed)`` (its values, states and meta) solved now and written atomically. The
    unfinished writes of this table that an interrupted solve left behind are removed
    first (:func:`.files.remove_leftovers`); ``force`` solves again (from a fixed-point
    table of the same states where there is one)."""
    with contextlib.suppress(OSError):
        remove_leftovers(Path(write_target(tables_dir)), folder_name(rs, kind))
    seed = None
    if not force:
        table = find_table(rs, kind, tables_dir)
        if table is not None:
            return loaded(rs, kind, table)
    else:
        seed = _rounded_table(rs, kind, tables_dir)
    est = _check_size(rs, kind, progress)
    bar = Progress(f"solving {rs.name} {kind}", progress, est["expected"])
    try:
        values, states, extra = compute(rs, est, bar, method, seed)
    finally:
        bar.close()
    folder = save_table(Path(write_target(tables_dir)), rs, kind, values, states, extra, encoding)
    from .files import load_table

    return Solution(rs, kind, load_table(folder, rs, kind), solved_now=True)


def solve_race_table(
    rs: Ruleset, tables_dir=None, *, progress=True, force=False, method=None, encoding="float64", **_how
) -> Solution:
    """The ``race`` objective (the registry's solver): its table, found or solved now."""
    return _stored(rs, "race", tables_dir, _compute_race, progress, force, method, encoding)


def solve_duel_table(
    rs: Ruleset, tables_dir=None, *, progress=True, force=False, method=None, encoding="float64", **_how
) -> Solution:
    """The ``duel`` objective (the registry's solver): its table, found or solved now."""
    return _stored(rs, "duel", tables_dir, _compute_duel, progress, force, method, encoding)


def player_table_meta(n: int, sol, meaning: str, method: str = "policy") -> dict:
    """What the meta.json of a table over ``n`` player states says of its solve ``sol``
    (with ``iterations``, ``residual`` and ``seconds``) and of its values."""
    return {
        "states": n,
        "player_states": n,
        "iterations": sol.iterations,
        "residual": sol.residual,
        "solve_seconds": sol.seconds,
        "kernel": kernel.IMPLEMENTATION,
        "method": method,
        "peak_memory_mb": peak_memory_mb(),
        "value_meaning": meaning,
    }


def _compute_race(rs: Ruleset, est: dict, bar, method, seed):
    from thousand.solvers.race import solve_race

    sol = solve_race(rs, progress=bar)
    extra = player_table_meta(len(sol.space), sol, "expected turns to win alone")
    return sol.turns, sol.space.encode(), extra


def _compute_duel(rs: Ruleset, est: dict, bar, method, seed):
    from thousand.engine.states import build_state_space
    from thousand.solvers.duel import DuelModel, solve_duel

    model = DuelModel(rs, space=build_state_space(rs, opponents=True, ends=est["ends"]))
    start = None
    # the seed's states must be the ones this solver enumerates, in the same order
    if seed is not None and method != "textbook" and np.array_equal(seed.states, model.space.encode()):
        start = model.from_table_values(seed.values)
        if bar.enabled:
            sys.stderr.write(_("starting from the fixed-point table {0}").format(seed.path) + "\n")
    sol = solve_duel(rs, model=model, progress=bar, method=method or "policy", start=start)
    model = sol.model
    extra = {
        **_duel_meta(model),
        "iterations": sol.passes,
        "policy_rounds": sol.rounds,
        "linear_sweeps": sol.sweeps,
        "policy_fallback": sol.fallback,
        "interface_pairs": sol.interface,
        "residual": sol.residual,
        "solve_seconds": sol.seconds,
        "kernel": kernel.IMPLEMENTATION,
        "method": method or "policy",
        "peak_memory_mb": peak_memory_mb(),
    }
    if start is not None:
        extra["started_from"] = str(seed.path)
    return model.table_values(sol.P), model.space.encode(), extra
