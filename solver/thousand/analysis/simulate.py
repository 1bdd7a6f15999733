"""Monte Carlo games of the built-in bots, played by a compiled loop.

Public API (used by ``thousand evaluate`` when both players are built-in)::

    simulate_duel(rs, first, second, games, seed, tables_dir=None, threads=1) -> SimResult
    simulate_race(rs, bot, games, seed, tables_dir=None) -> SimResult

Bots (``parse_builtin``):

* ``optimal`` -- the duel-optimal player of the solved duel table (in a race:
  the race-optimal player, the only optimum of a lone player);
* ``race`` -- the solitaire-optimal player of the race table, blind to the
  opponent;
* ``hold:N`` -- rolls until the turn total is at least ``N`` points and
  banking is allowed, then banks; ``cautious`` banks as soon as banking is
  allowed (``hold:0``). After a roll both keep the set-aside with the most
  points, on a tie the one using fewer dice (more dice left to roll);
* ``random`` -- uniform over the legal actions after a roll: each
  set-aside followed by rolling on, or by banking where that is allowed
  (the action set of :mod:`thousand.analysis.bots`).

Compulsory rolls (hot dice under ``must_roll``/``confirm``) are never a
choice, and a turn that has to end (dump, overshoot, a confirming roll that
can bank) ends for every bot.

The value bots (``optimal``, ``race``) play from policy tables built once per
ruleset: for every mover state ``x`` (and, for ``optimal``, every opponent
``y``) the turn DP of :func:`thousand.kernel.turn_dp` with ``full=True`` gives
``R(t, n)`` (rolling ``n`` dice at total ``t``) and ``RC(t)`` (a confirming
roll), next to ``E(t)``, the value of the turn ending at ``t``. They are
stored in float32 as rows ``[E, R(1..N), RC]`` per (x, y, t). Before a roll
the bot banks iff banking is allowed and ``E >= R`` (ties bank, as in the
kernel); after a roll it takes the first option of the class (class order)
with the largest continuation value, exactly as
:class:`thousand.solvers.advice.TurnAdvisor` values them. Because of float32, two
options whose values differ by less than about 1e-7 may be taken as a tie:
the cost in win probability is below that.

The duel policy holds ``n_states**2 * (T + 2) * W`` floats (plain: ~100 MB);
above :data:`MEMORY_BUDGET_MB` (env ``THOUSAND_SIM_MEMORY_MB``) the request
is refused with :class:`SimulationUnsupported`, and callers use a slower
Python loop instead.

Random numbers: each game has its own xoshiro256** stream derived from
``(seed, game number)``, so results do not depend on the thread count, and
the compiled loop and its pure twin (:mod:`thousand.kernel._sim_pure`) play the very
same games.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from thousand import kernel
from thousand.base.errors import BotError, ThousandError
from thousand.base.i18n import _
from thousand.base.objectives import objective as objective_named
from thousand.engine.player import Moves
from thousand.engine.states import StateSpace, build_state_space, decode
from thousand.engine.turn import MAX_TURNS  # per game; longer games are counted as unfinished
from thousand.rules.ruleset import Ruleset

__all__ = [
    "HOLD",
    "MAX_LUT",
    "MEMORY_BUDGET_MB",
    "OPTIMAL",
    "RANDOM",
    "BotPolicy",
    "BuiltinBot",
    "GamePlans",
    "SimResult",
    "SimulationUnsupported",
    "duel_player_tables",
    "parse_builtin",
    "policy_bytes",
    "race_player_tables",
    "roll_lookup",
    "simulate_duel",
    "simulate_race",
]

MEMORY_BUDGET_MB = float(os.environ.get("THOUSAND_SIM_MEMORY_MB", "1024"))
MAX_LUT = 1 << 22  # faces**dice above this: rolls cannot be looked up directly

OPTIMAL, HOLD, RANDOM = 0, 1, 2


class SimulationUnsupported(ThousandError):
    """A ruleset or bot the compiled simulator cannot play (too big, equal turns...)."""


@dataclass
class SimResult:
    """What a run of games gave. In a race ``first_wins`` counts finished games."""

    games: int
    first_wins: int
    seconds: float
    second_wins: int = 0
    unfinished: int = 0
    mean_turns: float = 0.0  # per finished game (both players' turns in a duel)
    std_turns: float = 0.0
    policy_seconds: float = 0.0  # building the bots' tables (not in ``seconds``)
    threads: int = 1
    implementation: str = ""

    @property
    def first_win_rate(self) -> float:
        return self.first_wins / self.games if self.games else float("nan")

    @property
    def ci95(self) -> float:
        """Half-width of the normal 95% interval of ``first_win_rate``."""
        p = self.first_win_rate
        return 1.96 * float(np.sqrt(p * (1 - p) / self.games)) if self.games else float("nan")

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else float("inf")


# --------------------------------------------------------------------------- bots


@dataclass(frozen=True)
class BuiltinBot:
    """A built-in bot as the compiled loop plays it: its kind, parameter and table."""

    spec: str
    kind: int
    param: int = 0
    table: str = ""  # "duel" or "race" for value bots


def parse_builtin(spec: str) -> BuiltinBot:
    """A built-in bot from its spec: ``optimal``, ``race``, ``hold:N``, ``cautious``, ``random``."""
    s = str(spec).strip().lower()
    if s == "optimal":
        return BuiltinBot(s, OPTIMAL, 0, "duel")
    if s == "race":
        return BuiltinBot(s, OPTIMAL, 0, "race")
    if s == "cautious":
        return BuiltinBot(s, HOLD, 0)
    if s == "random":
        return BuiltinBot(s, RANDOM, 0)
    m = re.fullmatch(r"hold:(\d+)", s)
    if m:
        return BuiltinBot(s, HOLD, int(m.group(1)))
    raise BotError(_("unknown bot {0!r}: built-in bots are optimal, race, hold:N, cautious, random").format(spec))


# --------------------------------------------------------------------------- engine


class BotPolicy(NamedTuple):
    """A bot as the game loop plays it: ``kind`` and ``param`` (:class:`BuiltinBot`), and
    for a value bot its stop bits ``dec`` at ``doff``, value rows ``val`` at ``voff``,
    and ``blind`` (1: the same rows against every opponent)."""

    kind: int
    param: int
    dec: np.ndarray
    doff: np.ndarray
    val: np.ndarray
    voff: np.ndarray
    blind: int


_CACHE: dict = {}


def _cached(key, make, size: int = 4):
    if key not in _CACHE:
        if len(_CACHE) >= size:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = make()
    return _CACHE[key]


def roll_lookup(rs: Ruleset):
    """``(lut, lut_off, lut_size)``: the roll class (global index in the roll
    table) of the ordered roll ``r = sum d_i * faces**i`` of ``n`` dice (faces
    ``d_i + 1``) is ``lut[lut_off[n] + r]``, ``r < lut_size[n] = faces**n``."""

    def make():
        table = kernel.roll_table(rs)
        F, N = rs.faces, rs.dice
        if F**N > MAX_LUT:
            raise SimulationUnsupported(
                f"{rs.name}: {F}**{N} ordered rolls are too many for the simulator's roll lookup"
            )
        parts, off, size = [], np.zeros(N + 2, np.int64), np.zeros(N + 1, np.uint64)
        for n in range(1, N + 1):
            rc = table.classes[n - 1]
            radix = (n + 1) ** np.arange(F, dtype=np.int64)
            keys = rc.rolls @ radix
            order = np.argsort(keys)
            r = np.arange(F**n, dtype=np.int64)
            digits = (r[:, None] // (F ** np.arange(n, dtype=np.int64))[None, :]) % F
            rkeys = radix[digits].sum(axis=1)
            pos = order[np.searchsorted(keys[order], rkeys)]
            assert np.array_equal(keys[pos], rkeys)
            parts.append((rc.roll_class[pos] + table.cls_ptr[n]).astype(np.int32))
            off[n + 1] = off[n] + F**n
            size[n] = F**n
        return np.concatenate(parts), off, size

    return _cached(("lut", rs), make)


@dataclass(frozen=True)
class GamePlans(kernel.DuelPlans):
    """Turn ends per state (:class:`thousand.kernel.DuelPlans`), with the states and the start."""

    space: StateSpace | None = None
    start: int = 0


def _duel_plans(rs: Ruleset) -> GamePlans:
    def make():
        from thousand.solvers.duel import DuelModel

        if rs.equal_turns:
            raise SimulationUnsupported(f"{rs.name}: the simulator does not play equal_turns rulesets")
        try:
            model = DuelModel(rs)
        except ThousandError as exc:
            raise SimulationUnsupported(str(exc)) from None
        arrays = {k: v for k, v in vars(model.plans).items() if k != "_native"}
        return GamePlans(**arrays, space=model.space, start=model.space.index[Moves(rs).initial()])

    return _cached(("duel-plans", rs), make)


def _race_plans(rs: Ruleset) -> GamePlans:
    def make():
        sp = build_state_space(rs)
        n = len(sp)
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(sp.T + 1, out=ptr[1:])
        stop_ok = np.concatenate(sp.stop_ok).astype(np.uint8)
        forced_ok = np.concatenate(sp.forced_ok).astype(np.uint8)
        nxt = np.where(stop_ok == 1, np.concatenate(sp.stop_idx), np.concatenate(sp.forced_idx)).astype(np.int64)
        z8 = np.zeros(len(nxt), np.uint8)
        ar = np.arange(n, dtype=np.int64)
        return GamePlans(
            ptr=ptr,
            stop_ok=stop_ok,
            forced_ok=forced_ok,
            next=nxt,
            after=np.zeros(len(nxt), np.int64),
            climbed=z8,
            bust=sp.bust_idx.astype(np.int64),
            score=np.array([x.score for x in sp.states], np.int64),
            overtaken=ar,
            pushed=ar,
            on_barrel=np.zeros(n, np.uint8),
            space=sp,
            start=sp.index[Moves(rs).initial()],
        )

    return _cached(("race-plans", rs), make)


def _width(rs: Ruleset) -> int:
    return rs.dice + 2


def _multi(rs: Ruleset) -> bool:
    """Whether some roll offers a choice of set-asides (then value bots need value rows)."""
    return bool(np.any(np.diff(kernel.roll_table(rs).opt_ptr) > 1))


def policy_bytes(rs: Ruleset, plans: GamePlans, per_opponent: bool) -> int:
    """Bytes of a value bot's policy tables on ``plans``."""
    n = len(plans.ptr) - 1
    rows = int(np.sum(np.diff(plans.ptr) + 1)) * (n if per_opponent else 1)
    return rows * (1 + (_width(rs) * 4 if _multi(rs) else 0))


def _check_budget(rs: Ruleset, nbytes: int, what: str) -> None:
    if nbytes > MEMORY_BUDGET_MB * 2**20:
        raise SimulationUnsupported(
            f"{rs.name}: the {what} policy of the simulator would take {nbytes / 2**20:,.0f} MB, more than "
            f"its budget of {MEMORY_BUDGET_MB:,.0f} MB (THOUSAND_SIM_MEMORY_MB)"
        )


def _fill(dec: np.ndarray, val: np.ndarray | None, ends: np.ndarray, stop_ok, forced_ok, tv, rs: Ruleset):
    """One mover's rows for K opponents: ``dec`` (K, T+2) stop bits, ``val``
    (K, T+2, W) = [E, A(1..N), A(hot)] (see the module docstring)."""
    N = rs.dice
    T = ends.shape[0] - 1
    E = np.vstack([ends, ends[T:]])  # (T+2, K)
    s_ok = np.append(stop_ok, stop_ok[T]).astype(bool)
    f_ok = np.append(forced_ok, forced_ok[T]).astype(bool)
    bits = np.zeros(dec.shape[::-1], np.uint8)  # (T+2, K)
    for n in range(1, N + 1):
        bits |= ((E >= tv.R[:, n, :]) & s_ok[:, None]).astype(np.uint8) << n
    dec[:] = bits.T
    if val is None:
        return
    hot = {kernel.FREE: tv.V[:, N, :], kernel.MUST_ROLL: tv.R[:, N, :], kernel.CONFIRM: tv.RC}[
        kernel.HOT_MODE[rs.hot_dice]
    ]
    A = np.concatenate([E[:, None, :], tv.V[:, 1:, :], hot[:, None, :]], axis=1)  # (T+2, W, K)
    A[f_ok] = E[f_ok][:, None, :]
    val[:] = A.transpose(2, 0, 1)


def _big_array(n: int, dtype) -> np.ndarray:
    """A zeroed array; a large one in anonymous memory advised to use huge pages
    (the game loop reads it at random: fewer TLB misses)."""
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes < 1 << 22:
        return np.zeros(n, dtype)
    import mmap

    buf = mmap.mmap(-1, nbytes)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):
            buf.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(buf, dtype=dtype, count=n)


def _layout(plans: GamePlans, K: int, W: int, multi: bool):
    rows = (np.diff(plans.ptr) + 1) * K
    doff = np.zeros(len(rows), np.int64)
    doff[1:] = np.cumsum(rows)[:-1]
    dec = _big_array(int(rows.sum()), np.uint8)
    val = _big_array(int(rows.sum()) * W, np.float32) if multi else np.zeros(1, np.float32)
    voff = doff * W if multi else np.zeros(len(rows), np.int64)
    return dec, doff, val, voff


def duel_player_tables(rs: Ruleset, table: kernel.RollTable, P: np.ndarray, plans: GamePlans):
    """``(dec, doff, val, voff)`` of the duel-optimal player: the stop bits of
    mover x against opponent y at total t are ``dec[doff[x] + y * (T_x + 2) + t]``,
    its value rows start at ``voff[x] + (y * (T_x + 2) + t) * W`` (kept only
    when some roll offers a choice). ``P[x, y]`` is the duel table in the state
    order of ``plans``."""
    _check_budget(rs, policy_bytes(rs, plans, True), "duel")
    n = len(plans.ptr) - 1
    W, multi = _width(rs), _multi(rs)
    dec, doff, val, voff = _layout(plans, n, W, multi)
    Y = np.arange(n)
    on_b = plans.on_barrel.astype(bool)
    for x in range(n):
        a, b = plans.ptr[x], plans.ptr[x + 1]
        T = b - a - 1
        stop_ok, forced_ok = plans.stop_ok[a:b], plans.forced_ok[a:b]
        nxt, after, climbed = plans.next[a:b], plans.after[a:b], plans.climbed[a:b].astype(bool)
        # as thousand.kernel._pure.duel_level, with Q[y, x] = P[x, y]
        y1 = np.where(climbed[:, None] & on_b[None, :], plans.pushed[None, :], Y[None, :])
        s = plans.score[y1]
        opp = np.where((plans.score[x] < s) & (s < after[:, None]), plans.overtaken[y1], y1)
        ends = 1.0 - P[opp, np.maximum(nxt, 0)[:, None]]
        ends[nxt == -1] = 1.0
        ends[(stop_ok | forced_ok) == 0] = 0.0
        bust = 1.0 - P[Y, plans.bust[x]]
        tv = kernel.turn_dp(table, stop_ok, ends, forced_ok, ends, bust, np.ones(n), full=True)
        m = n * (T + 2)
        _fill(
            dec[doff[x] : doff[x] + m].reshape(n, T + 2),
            val[voff[x] : voff[x] + m * W].reshape(n, T + 2, W) if multi else None,
            ends,
            stop_ok,
            forced_ok,
            tv,
            rs,
        )
    return dec, doff, val, voff


def race_player_tables(rs: Ruleset, table: kernel.RollTable, J: np.ndarray, plans: GamePlans):
    """``(dec, doff, val, voff)`` of the race player (as :func:`duel_player_tables`,
    one column). ``J[x]`` = minus the expected turns to win from state x."""
    W, multi = _width(rs), _multi(rs)
    dec, doff, val, voff = _layout(plans, 1, W, multi)
    Jw = np.append(J, 0.0)  # index -1: the win
    for x in range(len(plans.ptr) - 1):
        a, b = plans.ptr[x], plans.ptr[x + 1]
        T = b - a - 1
        stop_ok, forced_ok = plans.stop_ok[a:b], plans.forced_ok[a:b]
        ends = np.where((stop_ok | forced_ok) == 1, Jw[np.maximum(plans.next[a:b], -1)], 0.0)[:, None]
        tv = kernel.turn_dp(table, stop_ok, ends, forced_ok, ends, np.array([J[plans.bust[x]]]), np.zeros(1), full=True)
        _fill(
            dec[doff[x] : doff[x] + T + 2].reshape(1, T + 2),
            val[voff[x] : voff[x] + (T + 2) * W].reshape(1, T + 2, W) if multi else None,
            ends,
            stop_ok,
            forced_ok,
            tv,
            rs,
        )
    return dec, doff, val, voff


def _table_values(rs: Ruleset, objective: str, space: StateSpace, tables_dir):
    """The stored table of ``objective`` in the state order of ``space``; None
    if the table lacks some state of ``space``."""
    from thousand.storage.solve import solve_objective

    sol = solve_objective(rs, objective, tables_dir, progress=False)
    perm = np.empty(len(space), np.int64)
    index = {decode(row): i for i, row in enumerate(sol.table.states)}
    for i, x in enumerate(space.states):
        j = index.get(x)
        if j is None:
            return None
        perm[i] = j
    v = np.asarray(sol.table.values)
    return v[np.ix_(perm, perm)] if v.ndim == 2 else v[perm]


def _race_J(rs: Ruleset, table: kernel.RollTable, plans: GamePlans, tables_dir) -> np.ndarray:
    turns = _table_values(rs, "race", plans.space, tables_dir)
    if turns is None:
        # the duel's space has states a lone player never reaches (overtaken, pushed
        # off): solve the race on it instead
        from thousand.solvers.race import solve_race

        turns = solve_race(rs, table=table, space=plans.space).turns
    return -np.asarray(turns, dtype=np.float64)


def _bot_policy(rs: Ruleset, table: kernel.RollTable, bot: BuiltinBot, plans: GamePlans, tables_dir, duel: bool):
    """``(dec, doff, val, voff, blind)`` for a bot on ``plans`` (its turns solved with
    ``table``); empty tables for table-free bots."""
    if bot.kind != OPTIMAL:
        z = np.zeros(len(plans.ptr) - 1, np.int64)
        return np.zeros(1, np.uint8), z, np.zeros(1, np.float32), z, 1
    if objective_named(bot.table).opponents and duel:

        def make():
            _check_budget(rs, policy_bytes(rs, plans, True), "duel")
            P = _table_values(rs, "duel", plans.space, tables_dir)
            if P is None:
                raise SimulationUnsupported(f"{rs.name}: the duel table does not match the duel's states")
            return duel_player_tables(rs, table, P, plans)

        return (*_cached(("duel-policy", rs, table.backend.name, str(tables_dir)), make, size=2), 0)
    key = ("race-policy", rs, table.backend.name, str(tables_dir), "duel" if duel else "race")
    return (*_cached(key, lambda: race_player_tables(rs, table, _race_J(rs, table, plans, tables_dir), plans)), 1)


def _run(
    rs: Ruleset,
    table: kernel.RollTable,
    plans: GamePlans,
    bots,
    pols,
    race: bool,
    games: int,
    seed: int,
    threads: int,
    max_turns: int = MAX_TURNS,
):
    loop = table.backend.simulator()
    policies = [BotPolicy(b.kind, b.param, *p) for b, p in zip(bots, pols)]
    t0 = time.perf_counter()
    out = loop.run(
        table.rolls,
        roll_lookup(rs),
        plans.native(table.backend),
        rs.unit,
        plans.start,
        plans.start,
        policies,
        int(race),
        int(games),
        int(seed) & ((1 << 64) - 1),
        0,
        int(max_turns),
        int(threads),
    )
    return out, time.perf_counter() - t0, loop.IMPLEMENTATION


def _result(games, out, seconds, policy_seconds, threads, impl) -> SimResult:
    w0, w1, unf, s1, s2 = out
    done = w0 + w1
    mean = s1 / done if done else 0.0
    var = max(s2 / done - mean * mean, 0.0) * done / (done - 1) if done > 1 else 0.0
    return SimResult(
        games, int(w0), seconds, int(w1), int(unf), float(mean), float(np.sqrt(var)), policy_seconds, threads, impl
    )


def _check_games(games: int) -> None:
    if int(games) < 0:
        raise ThousandError(_("the number of games must be non-negative, got {0}").format(games))


def simulate_duel(
    rs: Ruleset,
    first: str,
    second: str,
    games: int,
    seed: int,
    tables_dir=None,
    threads: int = 1,
    table: kernel.RollTable | None = None,
) -> SimResult:
    """Play ``games`` duels of ``first`` (who moves first in every game) against
    ``second`` from the initial state; ``threads`` = 0 uses every core. ``table``
    (default: the selected kernel's) chooses the kernel and the game loop."""
    _check_games(games)
    bots = (parse_builtin(first), parse_builtin(second))
    table = table or kernel.roll_table(rs)
    t0 = time.perf_counter()
    roll_lookup(rs)
    plans = _duel_plans(rs)
    pols = [_bot_policy(rs, table, b, plans, tables_dir, duel=True) for b in bots]
    ps = time.perf_counter() - t0
    out, sec, impl = _run(rs, table, plans, bots, pols, False, games, seed, threads)
    return _result(games, out, sec, ps, threads, impl)


def simulate_race(
    rs: Ruleset,
    bot: str,
    games: int,
    seed: int,
    tables_dir=None,
    threads: int = 1,
    table: kernel.RollTable | None = None,
) -> SimResult:
    """Play ``games`` solitaire games of ``bot`` (``optimal`` = ``race`` here)
    and count the turns to win."""
    _check_games(games)
    b = parse_builtin(bot)
    if b.kind == OPTIMAL:
        b = BuiltinBot(b.spec, OPTIMAL, 0, "race")
    table = table or kernel.roll_table(rs)
    t0 = time.perf_counter()
    roll_lookup(rs)
    plans = _race_plans(rs)
    pol = _bot_policy(rs, table, b, plans, tables_dir, duel=False)
    ps = time.perf_counter() - t0
    out, sec, impl = _run(rs, table, plans, (b, b), (pol, pol), True, games, seed, threads)
    return _result(games, out, sec, ps, threads, impl)
