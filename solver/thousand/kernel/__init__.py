"""thousand.kernel: the dice kernel -- every roll, grouped into classes, and the single-turn
DP -- on one of two backends side by side, chosen once: compiled or pure Python.

May import thousand.base and thousand.rules.

Two backends share one API: the compiled extension ``thousand.kernel._kernel`` (built
from ``ext/_kernel.pyx``) and its pure-Python twin ``thousand.kernel._pure``. The
backend is chosen once, at import: the compiled one when it imports, unless
``THOUSAND_PURE=1`` (:data:`BACKEND`). A :class:`RollTable` is built once per
ruleset by a :class:`Backend` and owns that backend's flattened copy of the
classes; every function below runs on the backend of the table it is given, so
solvers never name a backend (tests hold the twins together by building a table
with :func:`backend` ``("pure")`` and ``("compiled")``).

Turn DP
-------
Inside one turn the state is the turn total ``t`` (in units) and the number
``n`` of dice to roll. Given how the turn can end --

* ``stop[t]``: the value of banking total ``t`` (where ``stop_ok[t]``);
* ``forced[t]``: the value of a turn that ends the moment the total reaches
  ``t`` (dump mid-turn, overshoot of an exact barrel; where ``forced_ok[t]``);
* ``Z``: the value of a bust (zero turn); ``W``: the value of an instant win;

the DP solves, for every ``t`` and ``n``,

    R(t, n) = sum_c p_c * max_{(x, u) in options(c)} A(t + x, n - u)
              + P_bust(n) * Z + P_instant(n) * W
    V(t, n) = max(stop[t], R(t, n))   if stop_ok[t]   else R(t, n)
    A(t, m) = forced[t]               if forced_ok[t]
            = H(t)                    if m == 0  (hot dice: all dice again)
            = V(t, m)                 otherwise
    H(t)    = V(t, N) (free) | R(t, N) (must_roll) | RC(t) (confirm)

where ``RC`` is ``R`` with ``A`` replaced after the roll by ``stop[t]`` where
banking is allowed (a confirming roll banks at once). The value of a turn is
``R(0, N)``: a turn starts by rolling all dice. Every scoring option adds at
least one unit, so the DP runs from ``t = T`` down to 0; totals above ``T``
behave like ``T`` (the caller's arrays are constant there), which makes that
tail independent of ``t`` with hot dice as its only cycle, solved exactly.

Values are vectors of length ``K`` (one column per opponent state, or K = 1).
With ``grad`` the derivative of every value with respect to ``Z`` (per
column) comes along: the probability, under the optimal decisions, that the
turn ends in a bust. Ties: banking wins over rolling, the first option of a
class (in the class's order) over later ones.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from thousand.rules.ruleset import Ruleset
from thousand.rules.scoring import scoring_groups

from . import _pure

__all__ = [
    "BACKEND",
    "CONFIRM",
    "FREE",
    "HOT_MODE",
    "IMPLEMENTATION",
    "MUST_ROLL",
    "Backend",
    "DuelPlans",
    "PolicyRows",
    "RollClasses",
    "RollTable",
    "Scratch",
    "TurnValues",
    "backend",
    "duel_frames",
    "duel_level",
    "duel_policy",
    "end_distribution",
    "end_opponents",
    "ranked_end_distribution",
    "roll_classes",
    "roll_table",
    "rows_minus",
    "turn_dp",
    "turn_ends",
    "turn_seconds",
]

MUST_ROLL, FREE, CONFIRM = 0, 1, 2
HOT_MODE = {"must_roll": MUST_ROLL, "free": FREE, "confirm": CONFIRM}


class Backend:
    """One implementation of the kernel API (``impl``: :mod:`thousand.kernel._kernel` or
    :mod:`thousand.kernel._pure`) with its game simulator (:meth:`simulator`), and the roll
    tables it has built (one per ruleset)."""

    def __init__(self, name: str):
        if name == "compiled":
            # OpenMP threads that spin while waiting for the next parallel region slow the
            # duel down several times on a busy machine; sleeping waiters cost almost nothing.
            os.environ.setdefault("OMP_WAIT_POLICY", "passive")
            from . import _kernel as impl  # type: ignore[attr-defined]
        elif name == "pure":
            from . import _pure as impl
        else:
            raise ValueError(f"unknown kernel backend {name!r}: compiled or pure")
        self.name, self.impl = name, impl
        self._tables = lru_cache(maxsize=64)(self._build_table)

    def __repr__(self) -> str:
        return f"Backend({self.name!r})"

    def simulator(self):
        """The game loop that goes with this kernel: the compiled :mod:`thousand.kernel._sim` with
        the compiled kernel, its pure twin :mod:`thousand.kernel._sim_pure` with the pure one, so
        that one choice (:data:`BACKEND`) picks both."""
        if self.name == "compiled":
            from . import _sim  # type: ignore[attr-defined]

            return _sim
        from . import _sim_pure

        return _sim_pure

    def roll_classes(self, rs: Ruleset, n: int) -> RollClasses:
        """The roll classes of ``n`` dice under ``rs``."""
        g = scoring_groups(rs)
        out = self.impl.roll_classes(
            g.counts, g.points, g.instant, n, rs.faces, rs.keep == "any", rs.unit, rs.compose == "any"
        )
        if rs.scoring.nothing and n == rs.dice:
            out = _with_nothing(out, rs.scoring.nothing // rs.unit, n)
        return RollClasses(n, rs.faces, *out)

    def roll_table(self, rs: Ruleset) -> RollTable:
        """All roll classes of a ruleset, built once (cached per ruleset)."""
        return self._tables(rs)

    def _build_table(self, rs: Ruleset) -> RollTable:
        classes = tuple(self.roll_classes(rs, n) for n in range(1, rs.dice + 1))
        cls_ptr = np.zeros(rs.dice + 2, dtype=np.int64)
        for n, rc in enumerate(classes, start=1):
            cls_ptr[n + 1] = cls_ptr[n] + len(rc)
        probs, inst, ptrs, pts, used = [], [], [np.zeros(1, np.int64)], [], []
        base = 0
        for rc in classes:
            probs.append(rc.prob)
            inst.append(rc.instant)
            ptrs.append(rc.opt_ptr[1:] + base)
            base += int(rc.opt_ptr[-1])
            pts.append(rc.opt_points)
            used.append(rc.opt_used)
        arrays = (
            cls_ptr,
            np.concatenate(probs),
            np.concatenate(inst).astype(np.uint8),
            np.concatenate(ptrs),
            np.concatenate(pts).astype(np.int64),
            np.concatenate(used).astype(np.int64),
        )
        hot = HOT_MODE[rs.hot_dice]
        return RollTable(rs.dice, hot, classes, *arrays, backend=self, rolls=self.impl.Rolls(*arrays, rs.dice, hot))

    def threads(self, threads: int = 0) -> int:
        """The threads a caller that splits work itself should use: ``threads``, or with 0
        every core this process may run on (``OMP_NUM_THREADS`` where set, as the
        kernel's own parallel loops). The pure twin holds the GIL: always 1."""
        if self.name != "compiled":
            return 1
        if threads > 0:
            return int(threads)
        env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        if env.isdigit() and int(env) > 0:
            return int(env)
        # the cores this process may run on (Linux); elsewhere every core of the machine
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

    def rows_minus(
        self, indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, x: np.ndarray, c: np.ndarray, threads: int = 0
    ) -> np.ndarray:
        """``c - A @ x`` for the sparse rows A = (indptr, cols, vals) (CSR; cols int32): the
        product of a policy evaluation's sweep, on ``threads`` threads (0: all)."""
        out = np.empty(len(indptr) - 1)
        self.impl.rows_minus(indptr, cols, vals, x, c, out, int(threads))
        return out

    def level_sweep(self, levels, size: int):
        """Gauss-Seidel sweeps over a policy round's levels (``impl.LevelSweep``):
        ``levels`` per level, top down, ``(rows, rho, indptr, cols, vals, succ, a)``;
        ``.sweep(x, threads)`` sets level by level ``x[rows] = (I + D)^-1 (rho - O x)``
        (O the CSR rows as in :meth:`rows_minus`, D the links as in :meth:`solve_links`)
        in place and returns the largest change. The compiled sweep allocates nothing."""
        return self.impl.LevelSweep(levels, int(size))

    def pattern_sweep(self, plans: DuelPlans, stores, levels, size: int):
        """Gauss-Seidel sweeps over levels of turns drawn from shared patterns
        (``impl.PatternSweep``): :meth:`level_sweep` for a duel whose rows repeat, held as
        patterns instead of one sparse row per pair.

        ``stores``: per store ``(ptr, ends, prob, bust_p, cst, mover, base[, won])``:
        pattern q's ends are the plan rows ``ends[ptr[q]:ptr[q+1]]`` of its mover
        ``mover[q]`` (ends that go on: ``plans.next >= 0``) with probabilities ``prob``,
        then its bust probability and constant; its rows read the block of x from ``base``
        (n^2 pairs). With ``won`` (equal_turns: ``plans.win_col``/``win_L`` given), an
        (n, win_L's columns) array, a pattern may also end at a first-seat win (``next ==
        -1``, ``win_col >= 0``), worth ``won[j, win_col[g]]`` against opponent j: what the
        last turn that follows leaves the rows' player. Patterns are numbered through the
        stores, one after another. ``levels``: per level, top down, ``(rows, pat, opp,
        succ)``. ``.sweep(x, threads)`` sets, in place, level by level, for row k
        (pattern p, opponent j, mover i = mover[p]),

            x[rows[k]] = cst[p] + sum_e prob[e] x[base + next[g_e] n + opp(g_e, j)]
                         + bust_p[p] x[base + bust[i] n + j]

        (a win end's term ``prob[e] won[j, win_col[g_e]]``, summed once per row when the
        sweeper is built) with ``opp`` the opponent after the end (pushed off the barrel,
        overtaken: :func:`end_opponents`), every value at the sweep so far, except that
        where ``succ[k] >= 0`` the bust is a link to the level's row ``succ[k]``, solved
        exactly with the level's other links (:meth:`solve_links`), and returns the largest
        change.
        Everything is checked here, once; the compiled sweep allocates nothing."""
        n = len(plans.score)
        checked, total = [], 0
        cols = 0 if plans.win_L is None else np.asarray(plans.win_L).shape[1]
        for ptr, ends, prob, bust_p, cst, mover, base, *won in stores:
            won = won[0] if won else None
            if won is not None:
                won = np.ascontiguousarray(won, dtype=np.float64)
                if plans.win_col is None or won.shape != (n, cols):
                    raise ValueError("won needs the plans' win_col and one row per state, one column per win_L's")
            ptr = np.ascontiguousarray(ptr, dtype=np.int64)
            ends = np.ascontiguousarray(ends, dtype=np.int32)
            prob, bust_p, cst = (np.ascontiguousarray(a, dtype=np.float64) for a in (prob, bust_p, cst))
            mover = np.ascontiguousarray(mover, dtype=np.int32)
            q = len(bust_p)
            if len(ptr) != q + 1 or len(cst) != q or len(mover) != q or len(prob) != len(ends):
                raise ValueError("a store needs ptr per pattern plus one, cst and mover per pattern, prob per end")
            if ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] != len(ends):
                raise ValueError("a store's ptr must run from 0 to its ends, not decreasing")
            if q and (mover.min() < 0 or mover.max() >= n):
                raise ValueError("a pattern's mover must be a state index")
            own = np.repeat(mover, np.diff(ptr))
            if len(ends) and (np.any(ends < plans.ptr[own]) or np.any(ends >= plans.ptr[own + 1])):
                raise ValueError("a pattern's ends must be plan rows of its mover")
            goes = plans.next[ends] >= 0
            wins = np.zeros_like(goes)
            if won is not None:
                wins = (plans.next[ends] == -1) & (plans.win_col[ends] >= 0)
            if not (goes | wins).all():
                raise ValueError(
                    "a pattern's ends must go on (next >= 0)"
                    + ("" if won is None else " or be first-seat wins (win_col >= 0)")
                )
            if base < 0 or base + n * n > size:
                raise ValueError("a store's block of pairs must lie inside x")
            # the wins read no x: apart, so that the sweeper sums them once per row, not per sweep
            of = np.repeat(np.arange(q), np.diff(ptr))
            split = []
            for keep in (goes, wins):
                at = np.zeros(q + 1, dtype=np.int64)
                np.cumsum(np.bincount(of[keep], minlength=q), out=at[1:])
                split.append((at, np.ascontiguousarray(ends[keep]), np.ascontiguousarray(prob[keep])))
            (ptr, ends, prob), (wptr, wends, wprob) = split
            wcol = np.ascontiguousarray(plans.win_col[wends] if len(wends) else np.zeros(0), dtype=np.int32)
            checked.append((ptr, ends, prob, bust_p, cst, mover, int(base), won, wptr, wcol, wprob))
            total += q
        held = []
        for rows, pat, opp, succ in levels:
            rows, succ = (np.ascontiguousarray(a, dtype=np.int64) for a in (rows, succ))
            pat, opp = (np.ascontiguousarray(a, dtype=np.int32) for a in (pat, opp))
            m = len(rows)
            if len(pat) != m or len(opp) != m or len(succ) != m:
                raise ValueError("a level needs pat, opp and succ per row")
            if m and (
                rows.min() < 0
                or rows.max() >= size
                or pat.min() < 0
                or pat.max() >= total
                or opp.min() < 0
                or opp.max() >= n
                or succ.max() >= m
            ):
                raise ValueError("rows must index x, pat the patterns, opp the states, succ the level's rows")
            held.append((rows, pat, opp, succ))
        return self.impl.PatternSweep(plans.native(self), checked, held, int(size))

    def solve_links(self, succ: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``x`` with ``x[k] + a[k] x[succ[k]] = b[k]`` for every k (``x[k] = b[k]``
        where ``succ[k] < 0``): the linear system of a duel level's bust links, a
        functional graph whose cycles are the roles swapping. Raises
        ZeroDivisionError on a singular cycle."""
        out = np.empty(len(b))
        self.impl.solve_links(
            np.ascontiguousarray(succ, dtype=np.int64),
            np.ascontiguousarray(a, dtype=float),
            np.ascontiguousarray(b, dtype=float),
            out,
        )
        return out


def _with_nothing(out, points: int, n: int):
    """Roll classes where the bust class of all ``n`` dice scores ``points`` units using every
    die instead (the ruleset's "nothing" pattern; scoring.RollScorer.set_asides says the same)."""
    rolls, roll_class, weight, opt_ptr, opt_points, opt_used, instant = out
    cnt = np.diff(opt_ptr)
    bust = np.flatnonzero((cnt == 0) & (instant == 0))
    if not len(bust):
        return out
    cnt = cnt.copy()
    cnt[bust] = 1
    new_ptr = np.concatenate([[0], np.cumsum(cnt)]).astype(opt_ptr.dtype)
    pts = np.empty(new_ptr[-1], dtype=opt_points.dtype)
    used = np.empty(new_ptr[-1], dtype=opt_used.dtype)
    busts = set(bust.tolist())
    for k in range(len(weight)):
        a, b = new_ptr[k], new_ptr[k + 1]
        if k in busts:
            pts[a:b], used[a:b] = points, n
        else:
            pts[a:b], used[a:b] = opt_points[opt_ptr[k] : opt_ptr[k + 1]], opt_used[opt_ptr[k] : opt_ptr[k + 1]]
    return rolls, roll_class, weight, new_ptr, pts, used, instant


_BACKENDS: dict[str, Backend] = {}


def backend(name: str | None = None) -> Backend:
    """The kernel backend ``name`` (``"compiled"`` or ``"pure"``), or the one selected at
    import (:data:`BACKEND`). ImportError when the compiled one is asked for and not built."""
    if name is None:
        return BACKEND
    if name not in _BACKENDS:
        _BACKENDS[name] = Backend(name)
    return _BACKENDS[name]


def _select() -> Backend:
    """The compiled backend when it imports, unless ``THOUSAND_PURE=1``: chosen once."""
    if os.environ.get("THOUSAND_PURE", "") not in ("", "0"):
        return backend("pure")
    try:
        return backend("compiled")
    except ImportError:
        return backend("pure")


BACKEND: Backend = _select()
IMPLEMENTATION: str = BACKEND.name


def roll_classes(rs: Ruleset, n: int) -> RollClasses:
    """The roll classes of ``n`` dice under ``rs`` (the selected backend)."""
    return BACKEND.roll_classes(rs, n)


def roll_table(rs: Ruleset) -> RollTable:
    """All roll classes of a ruleset, by the selected backend (cached per ruleset)."""
    return BACKEND.roll_table(rs)


rows_minus = BACKEND.rows_minus
# who each end of a turn hands the game to, in numpy (both backends' rule; the pure twin's code)
end_opponents = _pure.end_opponents


@dataclass(frozen=True)
class RollClasses:
    """The rolls of ``n`` dice, grouped into classes with identical choices.

    ``prob[k]`` = ``weight[k] / faces**n``; class ``k`` offers the set-asides
    ``opt_points[opt_ptr[k]:opt_ptr[k+1]]`` (units) using ``opt_used[...]`` dice;
    a class without options is a bust, unless ``instant[k]`` (an instant win).
    ``rolls[i]`` is the count vector of the ``i``-th sorted roll, of class
    ``roll_class[i]``.
    """

    n: int
    faces: int
    rolls: np.ndarray
    roll_class: np.ndarray
    weight: np.ndarray
    opt_ptr: np.ndarray
    opt_points: np.ndarray
    opt_used: np.ndarray
    instant: np.ndarray

    @property
    def denominator(self) -> int:
        return self.faces**self.n

    @property
    def prob(self) -> np.ndarray:
        return self.weight / float(self.denominator)

    @property
    def bust_weight(self) -> int:
        cnt = np.diff(self.opt_ptr)
        return int(self.weight[(cnt == 0) & (self.instant == 0)].sum())

    def __len__(self) -> int:
        return len(self.weight)


@dataclass(frozen=True)
class RollTable:
    """Roll classes for every dice count 1..dice, flattened for the turn DP, with the
    backend that built them and its own flattened copy (``rolls``), which the turn DP,
    the end distribution and the duel loops take."""

    dice: int
    hot_mode: int
    classes: tuple[RollClasses, ...]  # classes[n - 1] for n dice
    cls_ptr: np.ndarray  # classes of n dice are cls_ptr[n]:cls_ptr[n+1] (cls_ptr[0] = cls_ptr[1] = 0)
    cls_prob: np.ndarray
    cls_instant: np.ndarray
    opt_ptr: np.ndarray
    opt_points: np.ndarray
    opt_used: np.ndarray
    backend: Backend = field(compare=False, repr=False, default=None)
    rolls: object = field(compare=False, repr=False, default=None)  # the backend's Rolls: the same arrays

    @property
    def max_points(self) -> int:
        """The most units one roll can add."""
        return int(self.opt_points.max()) if len(self.opt_points) else 0


@dataclass
class TurnValues:
    """Result of :func:`turn_dp`: ``start`` = R(0, N) per column, and on request
    its derivative ``dstart`` with respect to the bust value and the full tables
    ``V``, ``R`` (shape (T+2, N+1, K)) and ``RC`` (T+2, K); row T+1 is the tail."""

    start: np.ndarray
    dstart: np.ndarray | None = None
    V: np.ndarray | None = None
    R: np.ndarray | None = None
    RC: np.ndarray | None = None

    def row(self, t: int) -> int:
        """The table row holding total ``t`` (totals above T share the tail row)."""
        assert self.V is not None
        return min(t, self.V.shape[0] - 1)


def turn_dp(
    table: RollTable,
    stop_ok,
    stop_val,
    forced_ok,
    forced_val,
    bust_val,
    win_val,
    grad: bool = False,
    full: bool = False,
) -> TurnValues:
    """Solve one turn (see the module docstring for the equations).

    ``stop_ok``/``forced_ok``: uint8 (T+1,); ``stop_val``/``forced_val``:
    float64 (T+1, K); ``bust_val``/``win_val``: float64 (K,). Totals above T
    take the values at T.
    """
    out = table.backend.impl.turn_dp(
        table.rolls, *_turn_inputs(stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val), bool(grad), bool(full)
    )
    return TurnValues(*out)


def _turn_inputs(stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val) -> tuple:
    """A turn's inputs as the kernels take them: contiguous, scalars broadcast to (T+1, K)
    and (K,)."""
    K = len(bust_val)

    def full(a, shape):
        # broadcast only what is not of the full shape already (most calls pass full arrays,
        # and the N-player solver makes many calls of a few columns)
        a = np.asarray(a)
        return np.ascontiguousarray(a if a.shape == shape else np.broadcast_to(a, shape), dtype=np.float64)

    return (
        np.ascontiguousarray(stop_ok, dtype=np.uint8),
        full(stop_val, (len(stop_ok), K)),
        np.ascontiguousarray(forced_ok, dtype=np.uint8),
        full(forced_val, (len(forced_ok), K)),
        np.ascontiguousarray(bust_val, dtype=np.float64),
        full(win_val, (K,)),
    )


def turn_ends(table: RollTable, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad: bool = False):
    """Solve one turn as :func:`turn_dp` and say how it ends under its decisions, without
    the full tables: ``(tv, ends, bust_p, win_p)`` with ``tv`` the :class:`TurnValues`
    (``start``, ``dstart``; no ``V``/``R``/``RC``), ``ends`` (T+1, K) the probability of
    ending the turn at each total -- banked or mid-turn, totals above T counted at T:
    :func:`end_distribution`'s ``stop_p + forced_p`` -- and the chances of a bust and of an
    instant win. The compiled kernel runs the forward pass of mass on each column block as
    soon as the block is solved (many columns at once, where :func:`end_distribution` goes
    one column at a time)."""
    start, dstart, ends, bust_p, win_p = table.backend.impl.turn_ends(
        table.rolls, *_turn_inputs(stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val), bool(grad)
    )
    return TurnValues(start, dstart, None, None, None), ends, bust_p, win_p


def end_distribution(table: RollTable, stop_ok, stop_val, forced_ok, forced_val, tv: TurnValues):
    """How a turn ends under the optimal decisions of a solved turn ``tv``.

    Returns ``(stop_p, forced_p, bust_p, win_p)``: the probability, per column,
    of banking at each total ``t`` (totals above T counted at T), of a
    mid-turn end at ``t``, of a bust and of an instant win; they sum to 1.
    The decisions are those of :func:`turn_dp` with its tie rules, so for a
    fixed policy the turn's value is the dot product of these with the end
    values. ``tv`` must come from ``turn_dp(..., full=True)`` on the same inputs.
    """
    K = tv.V.shape[2]
    T1 = len(stop_ok)
    return table.backend.impl.end_distribution(
        table.rolls,
        np.ascontiguousarray(stop_ok, dtype=np.uint8),
        np.ascontiguousarray(np.broadcast_to(stop_val, (T1, K)), dtype=np.float64),
        np.ascontiguousarray(forced_ok, dtype=np.uint8),
        np.ascontiguousarray(np.broadcast_to(forced_val, (T1, K)), dtype=np.float64),
        tv.V,
        tv.R,
        tv.RC,
    )


def ranked_end_distribution(table: RollTable, stop_ok, forced_ok, bank, rank, rank_c=None):
    """How turns end under a rule given by its decisions (not by values): one turn per
    column, ``(stop_p, forced_p, bust_p, win_p)`` as :func:`end_distribution` gives them
    (totals above T counted at T; they sum to 1 per column).

    The rule banks at (total t, m dice to roll) where banking is allowed (``stop_ok``) and
    ``bank[t, m]``, and rolls on otherwise; after a roll every scoring class takes its first option of the highest
    ``rank`` at the (total, dice left) it leads to -- ``rank_c`` after a confirming roll
    (hot dice ``confirm``; None: ``rank``). A mid-turn end (``forced_ok``) ends the turn;
    a confirming roll that scores banks at once where ``stop_ok``. The optimum's own
    decisions are the case ``rank = A`` (the turn DP's arrival values) and ``bank = stop_ok
    and S >= R``; a strategy card's are its marks and its order of set-asides.

    ``stop_ok``, ``forced_ok``: uint8 (T+1, K), per column; ``bank`` uint8, ``rank`` and
    ``rank_c`` float64: (T+2, dice+1, K), row T+1 standing for every total above T (whose
    hot-dice cycle is followed until its mass is at most 1e-17), column m = 0 for hot dice.
    """
    s_ok = np.ascontiguousarray(stop_ok, dtype=np.uint8)
    if s_ok.ndim != 2:
        raise ValueError("stop_ok must have shape (T+1, K)")
    T, K = s_ok.shape[0] - 1, s_ok.shape[1]
    shape = (T + 2, table.dice + 1, K)
    arrays = [np.ascontiguousarray(a, dtype=d) for a, d in ((bank, np.uint8), (rank, np.float64))]
    if rank_c is not None:
        arrays.append(np.ascontiguousarray(rank_c, dtype=np.float64))
    if any(a.shape != shape for a in arrays):
        raise ValueError(f"bank, rank and rank_c must have shape {shape} (T+2, dice+1, K)")
    f_ok = np.ascontiguousarray(forced_ok, dtype=np.uint8)
    if f_ok.shape != s_ok.shape:
        raise ValueError("forced_ok must have the shape of stop_ok")
    rank_c = arrays[2] if rank_c is not None else None
    return table.backend.impl.ranked_end_distribution(table.rolls, s_ok, f_ok, arrays[0], arrays[1], rank_c)


@dataclass(frozen=True)
class DuelPlans:
    """Every mover's turn ends, flattened for :func:`duel_level`.

    Mover ``i`` owns rows ``ptr[i]:ptr[i+1]`` (one per total t = 0..T_i):
    ``stop_ok``, ``forced_ok``, ``next`` (the mover's state after the end at
    t; -1 a win), ``after`` (the mover's score reached, for overtaking) and
    ``climbed`` (the end put the mover on the barrel). Per state: ``bust``
    (state after a zero turn), ``score``, ``overtaken``/``pushed`` (the state
    after being overtaken / pushed off the barrel), ``on_barrel``.
    """

    ptr: np.ndarray
    stop_ok: np.ndarray
    forced_ok: np.ndarray
    next: np.ndarray
    after: np.ndarray
    climbed: np.ndarray
    bust: np.ndarray
    score: np.ndarray
    overtaken: np.ndarray
    pushed: np.ndarray
    on_barrel: np.ndarray
    win_col: np.ndarray | None = None
    win_L: np.ndarray | None = None
    _native: dict = field(default_factory=dict, compare=False, repr=False)

    def native(self, backend: Backend):
        """The backend's own ``Plans`` of these arrays, built once per backend."""
        obj = self._native.get(backend.name)
        if obj is None:
            obj = self._native[backend.name] = backend.impl.Plans(
                self.ptr,
                self.stop_ok,
                self.forced_ok,
                self.next,
                self.after,
                self.climbed,
                self.bust,
                self.score,
                self.overtaken,
                self.pushed,
                self.on_barrel,
                self.win_col,
                self.win_L,
            )
        return obj


def duel_level(
    table: RollTable,
    plans: DuelPlans,
    Q: np.ndarray,
    movers: np.ndarray,
    opp_lo: np.ndarray,
    opp_hi: np.ndarray,
    grad: bool = True,
    threads: int = 0,
):
    """Solve the turns of many movers, each against a range of opponents.

    For mover ``movers[j]`` against every opponent ``y`` in
    ``opp_lo[j]:opp_hi[j]``, the turn DP is fed the duel's end values

        stop/forced[t] = 1                       if next[t] is a win
                       = 1 - win_L[y, win_col[t]] if next[t] is a win that leaves y a
                                                  last turn (equal_turns: win_col[t] >= 0)
                       = 1 - Q[next[t], y_t]     otherwise, y_t = y pushed off
                         (if climbed[t] and y is on the barrel), then overtaken
                         (if score[mover] < score[y_t] < after[t]),
        Z = 1 - Q[bust[mover], y],  W = 1,

    where ``Q[y, x] = P(x, y)`` (the duel values transposed). Returns
    ``(v, d, ptr)``: the values ``R(0, N)`` (and their derivatives with respect
    to Z) of mover j's opponents at ``v[ptr[j]:ptr[j+1]]``. ``threads`` = 0
    uses every core OpenMP offers.
    """
    K = (np.asarray(opp_hi) - np.asarray(opp_lo)).astype(np.int64)
    out_ptr = np.zeros(len(K) + 1, dtype=np.int64)
    np.cumsum(K, out=out_ptr[1:])
    v = np.empty(int(out_ptr[-1]))
    d = np.empty(int(out_ptr[-1])) if grad else np.empty(0)
    b = table.backend
    b.impl.duel_level(
        table.rolls,
        plans.native(b),
        Q,
        np.ascontiguousarray(movers, dtype=np.int64),
        np.ascontiguousarray(opp_lo, dtype=np.int64),
        np.ascontiguousarray(opp_hi, dtype=np.int64),
        v,
        d,
        out_ptr,
        bool(grad),
        int(threads),
    )
    return v, (d if grad else None), out_ptr


def duel_frames(
    table: RollTable,
    plans: DuelPlans,
    Q: np.ndarray,
    frame_movers: np.ndarray,
    col_ptr: np.ndarray,
    col_movers: np.ndarray,
    col_opps: np.ndarray,
    col_row0: np.ndarray,
    grad: bool = True,
    threads: int = 0,
):
    """:func:`duel_level` for pairs whose movers differ, as frames.

    Frame ``f`` runs one turn DP over the totals of mover ``frame_movers[f]`` with a
    column per pair ``c`` in ``col_ptr[f]:col_ptr[f+1]``: mover ``col_movers[c]``
    against ``col_opps[c]``, whose turn starts at row ``col_row0[c]`` (its total t is
    row ``col_row0[c] + t``). That is exact when the column's turns are the frame's
    rows shifted -- the same horizon and the same banking and forced ends at every
    total t >= 1, as for states that differ only in score where the rules depend on the
    score reached (checked: ValueError otherwise); each column's end values are its
    own. One duel level's movers, one opponent each, then share one vectorised DP
    instead of a scalar one per mover. Returns ``(v, d)``: ``v[c]`` = R(0, N) of pair c
    (``d[c]`` its derivative with respect to Z when ``grad``)."""
    C = len(col_movers)
    v = np.empty(C)
    d = np.empty(C) if grad else np.empty(0)
    b = table.backend
    b.impl.duel_frames(
        table.rolls,
        plans.native(b),
        Q,
        np.ascontiguousarray(frame_movers, dtype=np.int64),
        np.ascontiguousarray(col_ptr, dtype=np.int64),
        np.ascontiguousarray(col_movers, dtype=np.int64),
        np.ascontiguousarray(col_opps, dtype=np.int64),
        np.ascontiguousarray(col_row0, dtype=np.int64),
        v,
        d,
        bool(grad),
        int(threads),
    )
    return v, (d if grad else None)


class Scratch:
    """Reusable buffers for calls that need large temporaries, one per name, grown as
    needed and never shrunk. A policy round asks for a level's capacity slots hundreds
    of times; fresh arrays of that size are fresh pages every time (with the solver's
    fixed mmap threshold each one is mapped, faulted in and unmapped: classic's rounds
    took 13 million page faults and a seventh of their time in the system)."""

    def __init__(self):
        self._bufs: dict[str, np.ndarray] = {}

    def take(self, name: str, n: int, dtype) -> np.ndarray:
        """A buffer of ``n`` entries of ``dtype`` (uninitialised): the same memory as
        the last ``take`` of ``name`` when that was large enough."""
        buf = self._bufs.get(name)
        if buf is None or buf.dtype != np.dtype(dtype) or len(buf) < n:
            self._bufs.pop(name, None)  # the old one goes before the new one is made
            # a quarter more: the next, slightly larger call need not grow it again
            buf = self._bufs[name] = np.empty(max(n + n // 4, 1), dtype=dtype)
        return buf[:n]


@dataclass
class PolicyRows:
    """Solved turns and their greedy policies as sparse rows (:func:`duel_policy`).

    Pair p is mover ``movers[j]`` against opponent ``opp_lo[j] + k``, p = ``ptr[j] + k``.
    ``v[p]`` is the turn's value R(0, N) (the Bellman update of P at that pair) and,
    with the turn's decisions held fixed, its value as a function of Q is

        P_p = c[p] - sum_{e = indptr[p]}^{indptr[p+1]-1} vals[e] * Q.flat[cols[e]]

    where ``Q.flat[z * n + w] = Q[z, w] = P(w, z)``: ``cols`` (int32) names the pair the
    turn hands over (the opponent to move next against the mover's new state) and
    ``vals`` its probability; ``c`` collects the ends that do not read Q (wins, and
    the 1 of every 1 - Q). At the Q it was solved with, ``v == c - M @ Q.flat``.

    Asked to split by ``local`` (local[col] >= 0 for the pairs of, say, one level),
    the rows keep only the other entries and ``inner = (rows, locs, vals)`` holds
    those that stay inside, with their local column ``local[col]``.
    """

    v: np.ndarray
    c: np.ndarray
    indptr: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    ptr: np.ndarray
    inner: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


def duel_policy(
    table: RollTable,
    plans: DuelPlans,
    Q: np.ndarray,
    movers: np.ndarray,
    opp_lo: np.ndarray,
    opp_hi: np.ndarray,
    threads: int = 0,
    local: np.ndarray | None = None,
    frames: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    drop: float = 0.0,
    scratch: Scratch | None = None,
    links: bool = False,
) -> PolicyRows:
    """:func:`duel_level` (without the gradient) and the greedy policy of every pair
    as a sparse row: a forward pass of probability mass through each solved turn
    gives how it ends (see :func:`end_distribution`), and each end names the pair
    that follows it. Policy iteration evaluates these rows as a linear system.

    With ``frames = (col_ptr, col_movers, col_opps, col_row0)`` the pairs are frames as
    in :func:`duel_frames` (``movers`` the frame movers, ``opp_lo``/``opp_hi``
    ignored): pair p is column p. ``drop > 0`` asks for an approximate Jacobian: row
    entries below ``drop`` are left out (``c`` and ``v`` stay exact) and ``vals`` is
    float32. ``scratch``: where the uncompacted rows are written (reused across calls).
    ``local``: pair index -> row of this call, or -1; the entries whose pair has a row
    here come back apart as ``inner`` (with ``links``, only each row's largest one; its
    other entries stay in the CSR rows)."""
    movers = np.ascontiguousarray(movers, dtype=np.int64)
    if frames is not None:
        ptr, col_movers, col_opps, col_row0 = (np.ascontiguousarray(a, dtype=np.int64) for a in frames)
        own, per_pair = col_movers, np.ones(len(col_movers), dtype=np.int64)
    else:
        lo = np.ascontiguousarray(opp_lo, dtype=np.int64)
        hi = np.ascontiguousarray(opp_hi, dtype=np.int64)
        ptr = np.zeros(len(movers) + 1, dtype=np.int64)
        np.cumsum(hi - lo, out=ptr[1:])
        own, per_pair = movers, hi - lo
    pairs = int(ptr[-1])
    # capacity per pair: one entry per total 1..T of its mover, and the bust
    T = (plans.ptr[own + 1] - plans.ptr[own] - 1) if len(own) else np.zeros(0, np.int64)
    cap = np.zeros(pairs + 1, dtype=np.int64)
    np.cumsum(np.repeat(T + 1, per_pair), out=cap[1:])
    v = np.empty(pairs)
    c = np.empty(pairs)
    cnt = np.zeros(pairs, dtype=np.int64)
    scratch = scratch or Scratch()
    cols = scratch.take("cols", int(cap[-1]), np.int64)
    vals = scratch.take("vals", int(cap[-1]), np.float64)
    b = table.backend
    if frames is not None:
        b.impl.duel_policy_frames(
            table.rolls,
            plans.native(b),
            Q,
            movers,
            ptr,
            col_movers,
            col_opps,
            col_row0,
            v,
            c,
            cap,
            cols,
            vals,
            cnt,
            int(threads),
        )
    else:
        b.impl.duel_policy(
            table.rolls, plans.native(b), Q, movers, lo, hi, v, ptr, c, cap, cols, vals, cnt, int(threads)
        )
    indptr, out_cols, out_vals, in_rows, in_locs, in_vals = b.impl.rows_split(
        cap, cnt, cols, vals, local, float(drop), bool(links), int(threads)
    )
    inner = (in_rows, in_locs, in_vals) if local is not None else None
    return PolicyRows(v, c, indptr, out_cols, out_vals, ptr, inner)


def turn_seconds(rs: Ruleset, rows: int, columns: int = 1) -> float:
    """Seconds of one turn DP of ``rs`` over ``rows`` totals on this machine, per column of
    a call with ``columns`` columns (the best of a few calls: the machine may be shared)."""
    table = roll_table(rs)
    stop_ok = np.ones(rows + 1, np.uint8)
    stop_val = np.repeat(np.linspace(0.0, 1.0, rows + 1)[:, None], columns, axis=1)
    args = (
        table,
        stop_ok,
        stop_val,
        np.zeros(rows + 1, np.uint8),
        np.zeros((rows + 1, columns)),
        np.linspace(0.0, 0.5, columns),
        np.ones(columns),
    )
    best, spent = float("inf"), 0.0
    for _k in range(50):
        t0 = time.perf_counter()
        turn_dp(*args)
        dt = time.perf_counter() - t0
        best, spent = min(best, dt / columns), spent + dt
        if spent > 0.05:
            break
    return best
