"""Pure-Python/numpy twin of the compiled kernel (``ext/_kernel.pyx``).

Same objects, same functions, same arguments, same results; used when the
extension is missing or ``THOUSAND_PURE=1``. See :mod:`thousand.kernel` for the
meaning of every argument. :class:`Rolls` (the flattened roll classes of a
ruleset) and :class:`Plans` (every mover's turn ends in a duel) are built once
and passed to the turn DP, the end distribution and the duel loops.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CONFIRM",
    "FREE",
    "IMPLEMENTATION",
    "MUST_ROLL",
    "LevelSweep",
    "PatternSweep",
    "Plans",
    "Rolls",
    "duel_frames",
    "duel_level",
    "duel_policy",
    "duel_policy_frames",
    "end_distribution",
    "end_opponent",
    "end_opponents",
    "ranked_end_distribution",
    "roll_classes",
    "rows_minus",
    "rows_split",
    "solve_links",
    "turn_dp",
    "turn_ends",
]

IMPLEMENTATION = "pure"
MUST_ROLL, FREE, CONFIRM = 0, 1, 2


class Rolls:
    """The roll classes of every dice count 1..``dice``, flattened: classes of n dice
    are ``cls_ptr[n]:cls_ptr[n+1]`` with probabilities ``cls_prob`` and instant-win
    flags ``cls_instant``; class k offers the set-asides ``opt_ptr[k]:opt_ptr[k+1]``
    (``opt_points`` units, ``opt_used`` dice); ``hot_mode`` is MUST_ROLL, FREE or CONFIRM."""

    def __init__(self, cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice, hot_mode):
        if dice < 1 or hot_mode not in (MUST_ROLL, FREE, CONFIRM):
            raise ValueError("dice must be >= 1 and hot_mode 0, 1 or 2")
        self.cls_ptr = np.ascontiguousarray(cls_ptr, dtype=np.int64)
        self.cls_prob = np.ascontiguousarray(cls_prob, dtype=np.float64)
        self.cls_instant = np.ascontiguousarray(cls_instant, dtype=np.uint8)
        self.opt_ptr = np.ascontiguousarray(opt_ptr, dtype=np.int64)
        self.opt_points = np.ascontiguousarray(opt_points, dtype=np.int64)
        self.opt_used = np.ascontiguousarray(opt_used, dtype=np.int64)
        self.dice, self.hot_mode = int(dice), int(hot_mode)

    def arrays(self) -> tuple:
        return (
            self.cls_ptr,
            self.cls_prob,
            self.cls_instant,
            self.opt_ptr,
            self.opt_points,
            self.opt_used,
            self.dice,
            self.hot_mode,
        )


class Plans:
    """Every mover's turn ends in a duel, flattened (see :class:`thousand.kernel.DuelPlans`)."""

    _INT = ("ptr", "next", "after", "bust", "score", "overtaken", "pushed")
    _BYTE = ("stop_ok", "forced_ok", "climbed", "on_barrel")

    def __init__(
        self,
        ptr,
        stop_ok,
        forced_ok,
        next,
        after,
        climbed,
        bust,
        score,
        overtaken,
        pushed,
        on_barrel,
        win_col=None,
        win_L=None,
    ):
        args = dict(
            ptr=ptr,
            stop_ok=stop_ok,
            forced_ok=forced_ok,
            next=next,
            after=after,
            climbed=climbed,
            bust=bust,
            score=score,
            overtaken=overtaken,
            pushed=pushed,
            on_barrel=on_barrel,
        )
        for k, v in args.items():
            setattr(self, k, np.ascontiguousarray(v, dtype=np.int64 if k in self._INT else np.uint8))
        self.win_col = None if win_col is None else np.ascontiguousarray(win_col, dtype=np.int64)
        self.win_L = None if win_L is None else np.ascontiguousarray(win_L, dtype=np.float64)


# --------------------------------------------------------------------------- rolls


def _sorted_rolls(n: int, faces: int):
    """Every sorted roll of ``n`` dice as a count vector, with its number of orderings."""
    fact = [1]
    for i in range(1, n + 1):
        fact.append(fact[-1] * i)

    def rec(face: int, left: int, acc: list[int]):
        if face == faces - 1:
            yield acc + [left]
            return
        for k in range(left, -1, -1):
            yield from rec(face + 1, left - k, acc + [k])

    for c in rec(0, n, []):
        w = fact[n]
        for k in c:
            w //= fact[k]
        yield tuple(c), w


def roll_classes(group_counts, group_points, instant, n, faces, keep_any, unit, compose_any=False):
    """Roll classes of ``n`` dice.

    Returns ``(rolls, roll_class, weight, opt_ptr, opt_points, opt_used, is_instant)``:
    ``rolls`` int64 (R, faces) count vectors of the sorted rolls (in the kernel's
    order), ``roll_class`` int64 (R,), ``weight`` int64 (C,) the number of ordered
    rolls of each class (out of ``faces**n``), options of class ``k`` at
    ``opt_ptr[k]:opt_ptr[k+1]`` as (``opt_points`` in units, ``opt_used`` dice),
    ``is_instant`` uint8 (C,). Classes are numbered in order of first appearance;
    options of a class are sorted by (points, used). ``keep_any``: every sub-multiset
    is a set-aside whose best composition uses all its dice, or with ``compose_any``
    one that some composition uses all of (scored by the best such composition).
    """
    comp = _Compositions(group_counts, group_points)
    inst = [tuple(int(x) for x in row) for row in instant]

    keys: dict[tuple, int] = {}
    rolls, roll_class, weights, options, flags = [], [], [], [], []
    for c, w in _sorted_rolls(n, faces):
        if any(all(a >= x for a, x in zip(c, pat)) for pat in inst):
            key: tuple = ("instant",)
        else:
            key = tuple(sorted(comp.options(c, keep_any, compose_any, unit)))
        if key not in keys:
            keys[key] = len(weights)
            weights.append(0)
            flags.append(1 if key == ("instant",) else 0)
            options.append([] if key == ("instant",) else list(key))
        k = keys[key]
        weights[k] += w
        rolls.append(c)
        roll_class.append(k)
    opt_ptr = np.zeros(len(weights) + 1, dtype=np.int64)
    np.cumsum([len(o) for o in options], out=opt_ptr[1:])
    flat = [o for opts in options for o in opts]
    opt_points = np.array([o[0] for o in flat], dtype=np.int64)
    opt_used = np.array([o[1] for o in flat], dtype=np.int64)
    return (
        np.array(rolls, dtype=np.int64).reshape(-1, faces),
        np.array(roll_class, dtype=np.int64),
        np.array(weights, dtype=np.int64),
        opt_ptr,
        opt_points,
        opt_used,
        np.array(flags, dtype=np.uint8),
    )


class _Compositions:
    """How the scoring groups compose a multiset of faces (count vectors), memoised:
    :meth:`best` (the most points, then the most dice), :meth:`full` (the most points of a
    composition that uses every die) and the set-asides a roll offers (:meth:`options`)."""

    def __init__(self, group_counts, group_points):
        self.groups = [(tuple(int(x) for x in row), int(p)) for row, p in zip(group_counts, group_points)]
        self._best: dict[tuple[int, ...], tuple[int, int]] = {}
        self._full: dict[tuple[int, ...], int | None] = {}

    def _fits(self, c):
        """The groups that ``c`` holds, each with what is left of ``c`` without it."""
        for g, pts in self.groups:
            if all(a >= x for a, x in zip(c, g)):
                yield g, pts, tuple(a - x for a, x in zip(c, g))

    def best(self, c) -> tuple[int, int]:
        """(points, dice used) of the best composition of ``c``, by points then dice."""
        if c not in self._best:
            b = (0, 0)
            for g, pts, rest in self._fits(c):
                p, u = self.best(rest)
                b = max(b, (p + pts, u + sum(g)))
            self._best[c] = b
        return self._best[c]

    def full(self, c) -> int | None:
        """The most points of a composition of ``c`` that uses every die (None: none does)."""
        if not any(c):
            return 0
        if c not in self._full:
            b = None
            for _g, pts, rest in self._fits(c):
                r = self.full(rest)
                if r is not None and (b is None or r + pts > b):
                    b = r + pts
            self._full[c] = b
        return self._full[c]

    def options(self, c, keep_any: bool, compose_any: bool, unit: int) -> set[tuple[int, int]]:
        """The set-asides of roll ``c`` as (points in units, dice used): its best composition;
        or with ``keep_any`` every sub-multiset whose best composition uses all its dice (with
        ``compose_any``, that some composition uses all of, scored by the best such one)."""
        if not keep_any:
            p, u = self.best(c)
            return {(p // unit, u)} if u else set()
        opts = set()
        for sub in _sub_multisets(c):
            k = sum(sub)
            if not k:
                continue
            if compose_any:
                f = self.full(sub)
                if f is not None:
                    opts.add((f // unit, k))
                continue
            p, u = self.best(sub)
            if u == k:
                opts.add((p // unit, k))
        return opts


def _sub_multisets(c):
    """Every count vector below ``c`` (each face from 0 to its count)."""
    if not c:
        yield ()
        return
    for rest in _sub_multisets(c[1:]):
        for k in range(c[0] + 1):
            yield (k,) + rest


# --------------------------------------------------------------------------- turn DP


def _segment_argmax(vals, seg_start, nseg):
    """Index (into ``vals``) of the first maximum of each segment, per column."""
    mx = np.maximum.reduceat(vals, seg_start, axis=0)
    idx = np.arange(vals.shape[0])[:, None]
    seg_of = np.repeat(np.arange(nseg), np.diff(np.append(seg_start, vals.shape[0])))
    hit = np.where(vals == mx[seg_of], idx, vals.shape[0])
    return np.minimum.reduceat(hit, seg_start, axis=0)


def _options_by_dice(cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice):
    """Per dice count n: (probabilities of the scoring classes, their options' points and
    dice left, flattened, segment starts, P(bust), P(instant win))."""
    per_n = []
    for n in range(1, dice + 1):
        lo, hi = cls_ptr[n], cls_ptr[n + 1]
        prob = cls_prob[lo:hi]
        inst = cls_instant[lo:hi].astype(bool)
        cnt = opt_ptr[lo + 1 : hi + 1] - opt_ptr[lo:hi]
        scoring = (~inst) & (cnt > 0)
        ks = np.nonzero(scoring)[0] + lo
        o_idx = (
            np.concatenate([np.arange(opt_ptr[k], opt_ptr[k + 1]) for k in ks]) if len(ks) else np.zeros(0, np.int64)
        )
        seg = np.zeros(len(ks), dtype=np.int64)
        if len(ks):
            seg[1:] = np.cumsum(cnt[scoring])[:-1]
        per_n.append(
            (
                prob[scoring],
                opt_points[o_idx],
                n - opt_used[o_idx],
                seg,
                prob[(~inst) & (cnt == 0)].sum(),
                prob[inst].sum(),
            )
        )
    return per_n


def turn_dp(rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, full):
    """See :func:`thousand.kernel.turn_dp`: ``(start, dstart, V, R, RC)``."""
    return _turn_dp(*rolls.arrays(), stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, full)


def _turn_dp(
    cls_ptr,
    cls_prob,
    cls_instant,
    opt_ptr,
    opt_points,
    opt_used,
    dice,
    hot_mode,
    stop_ok,
    stop_val,
    forced_ok,
    forced_val,
    bust_val,
    win_val,
    grad,
    full,
):
    """See :func:`thousand.kernel.turn_dp`."""
    dp = _TurnDP(
        _options_by_dice(cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, dice),
        dice,
        hot_mode,
        (stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val),
        grad,
    )
    dp.solve_tail()
    # ---- totals T..0: every scoring roll adds at least one unit, so go down.
    for t in range(dp.L - 2, -1, -1):
        dp.solve_total(t)
        dp.arrive(t)
    start = dp.R[0, dice].copy()
    dstart = dp.dR[0, dice].copy() if grad else None
    if full:
        return start, dstart, dp.V, dp.R, dp.RC
    return start, dstart, None, None, None


class _TurnDP:
    """The turn's value tables for every total t (index T + 1 stands for every total above
    T) and dice to roll n, and with ``grad`` their derivatives by the bust value:
    ``V[t, n]`` the value with the choice to bank, ``R[t, n]`` of rolling, ``RC[t]`` of a
    confirming roll of every die; ``A[t, m]`` the value of arriving at total t with m dice
    to roll (m = 0: hot dice), ``AC`` the same after a confirming roll."""

    def __init__(self, per_n, dice, hot_mode, ends, grad):
        stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val = ends
        self.per_n, self.dice, self.hot_mode, self.grad = per_n, dice, hot_mode, grad
        self.bust_val, self.win_val = bust_val, win_val
        T = stop_ok.shape[0] - 1
        K = self.K = bust_val.shape[0]
        L = self.L = T + 2
        self.s_ok = np.append(stop_ok, stop_ok[-1]).astype(bool)
        self.f_ok = np.append(forced_ok, forced_ok[-1]).astype(bool)
        self.s_val = np.vstack([stop_val, stop_val[-1:]])
        self.f_val = np.vstack([forced_val, forced_val[-1:]])
        self.V, self.R, self.RC = np.zeros((L, dice + 1, K)), np.zeros((L, dice + 1, K)), np.zeros((L, K))
        self.A, self.AC = np.zeros((L, dice + 1, K)), np.zeros((L, dice + 1, K))
        zero = np.zeros_like if grad else (lambda _x: None)
        self.dV, self.dR, self.dRC, self.dA, self.dAC = (zero(x) for x in (self.V, self.R, self.RC, self.A, self.AC))
        self.one = np.ones(K)

    def roll(self, t, n, Atab, dAtab):
        """The value (and derivative) of rolling n dice at total t, arrivals read from Atab."""
        probs, pts, left, seg, p_bust, p_inst = self.per_n[n - 1]
        val = p_bust * self.bust_val + p_inst * self.win_val
        dval = p_bust * self.one if self.grad else None
        if len(probs):
            tt = np.minimum(t + pts, self.L - 1)
            vals = Atab[tt, left]
            if self.grad:
                arg = _segment_argmax(vals, seg, len(seg))
                cols = np.arange(self.K)[None, :]
                val = val + probs @ vals[arg, cols]
                dval = dval + probs @ dAtab[tt, left][arg, cols]
            else:
                val = val + probs @ np.maximum.reduceat(vals, seg, axis=0)
        return val, dval

    def settle(self, t, n, r, dr):
        """V = stop if allowed and at least as good as rolling, else the roll."""
        self.R[t, n] = r
        if self.grad:
            self.dR[t, n] = dr
        if self.s_ok[t]:
            take = self.s_val[t] >= r
            self.V[t, n] = np.where(take, self.s_val[t], r)
            if self.grad:
                self.dV[t, n] = np.where(take, 0.0, dr)
        else:
            self.V[t, n] = r
            if self.grad:
                self.dV[t, n] = dr

    def solve_total(self, t):
        """V, R (and RC) at total t from the arrivals above it."""
        for n in range(1, self.dice + 1):
            self.settle(t, n, *self.roll(t, n, self.A, self.dA))
        if self.hot_mode == CONFIRM:
            self.RC[t], d = self.roll(t, self.dice, self.AC, self.dAC)
            if self.grad:
                self.dRC[t] = d

    def arrive(self, t):
        """Fill A[t] and AC[t] from the values at total t."""
        A, dA, grad = self.A, self.dA, self.grad
        if self.f_ok[t]:
            A[t] = self.AC[t] = self.f_val[t]
            if grad:
                dA[t] = self.dAC[t] = 0.0
            return
        A[t, 1:] = self.V[t, 1:]
        A[t, 0] = self._hot(self.V, self.R, self.RC, t)
        if grad:
            dA[t, 1:] = self.dV[t, 1:]
            dA[t, 0] = self._hot(self.dV, self.dR, self.dRC, t)
        _fill_confirm(t, A, dA, self.AC, self.dAC, self.s_ok, self.s_val, grad)

    def _hot(self, V, R, RC, t):
        """The value of hot dice at total t: as its mode says (bank or roll, must roll, confirm)."""
        if self.hot_mode == FREE:
            return V[t, self.dice]
        return R[t, self.dice] if self.hot_mode == MUST_ROLL else RC[t]

    def solve_tail(self):
        """Every total above T behaves alike; the only cycle is hot dice. Solve h = f(h) for
        the value h of the hot state by Newton's method on the convex piecewise-linear f
        (exact after finitely many steps)."""
        t, dice, hot_mode, s_ok, s_val = self.L - 1, self.dice, self.hot_mode, self.s_ok, self.s_val
        if self.f_ok[t]:
            self.arrive(t)
            self.solve_total(t)
            return
        bust_val, win_val = self.bust_val, self.win_val
        lo = np.minimum.reduce([bust_val, win_val, s_val[t]]) if s_ok[t] else np.minimum(bust_val, win_val)
        h = lo.copy()
        for _ in range(200):
            fh, slope = _tail_eval(h, t, dice, hot_mode, s_ok, s_val, bust_val, win_val, self.per_n, self.L)
            if np.all(np.abs(fh - h) <= 1e-15 * np.maximum(1.0, np.abs(h))):
                h = fh
                break
            h = np.where(slope < 1.0, (fh - slope * h) / (1.0 - slope), fh)
        tables = (self.A, self.AC, self.dA, self.dAC, self.R, self.RC, self.V, self.dR, self.dRC, self.dV)
        _tail_fill(h, t, dice, hot_mode, self.settle, self.roll, *tables, self.grad, s_ok, s_val)
        if self.grad:
            # d h / d Z = f_Z / (1 - f_h) at the fixed point, then refill
            fz = self.dA[t, 0].copy()
            _, slope = _tail_eval(h, t, dice, hot_mode, s_ok, s_val, bust_val, win_val, self.per_n, self.L)
            dh = fz / (1.0 - slope)
            _tail_fill(h, t, dice, hot_mode, self.settle, self.roll, *tables, self.grad, s_ok, s_val, dh=dh)


def _fill_confirm(t, A, dA, AC, dAC, s_ok, s_val, grad):
    """AC[t] (arrivals after a confirming roll): the bank where banking is allowed, else A[t]."""
    if s_ok[t]:
        AC[t] = s_val[t]
        if grad:
            dAC[t] = 0.0
    else:
        AC[t] = A[t]
        if grad:
            dAC[t] = dA[t]


def _tail_eval(h, t, dice, hot_mode, s_ok, s_val, bust_val, win_val, per_n, L):
    """f(h) and its slope: the hot-state value implied by a guess h for it."""
    K = h.shape[0]
    a = np.zeros((dice + 1, K))
    da = np.zeros((dice + 1, K))
    a[0], da[0] = h, 1.0
    ac = np.zeros((dice + 1, K))
    dac = np.zeros((dice + 1, K))
    stop = s_val[t] if s_ok[t] else None
    r = dr = None
    for n in range(1, dice + 1):
        r, dr = _tail_roll(n, a, da, per_n, bust_val, win_val)
        if stop is not None:
            take = stop >= r
            a[n] = np.where(take, stop, r)
            da[n] = np.where(take, 0.0, dr)
        else:
            a[n], da[n] = r, dr
    rd, drd = r, dr  # the roll of all dice
    if hot_mode == FREE:
        return a[dice], da[dice]
    if hot_mode == MUST_ROLL:
        return rd, drd
    if stop is not None:
        ac[:] = stop
    else:
        ac[:], dac[:] = a, da
    return _tail_roll(dice, ac, dac, per_n, bust_val, win_val)


def _tail_roll(n, a, da, per_n, bust_val, win_val):
    probs, pts, left, seg, p_bust, p_inst = per_n[n - 1]
    val = p_bust * bust_val + p_inst * win_val
    dval = np.zeros_like(val)
    if len(probs):
        vals = a[left]
        arg = _segment_argmax(vals, seg, len(seg))
        cols = np.arange(vals.shape[1])[None, :]
        val = val + probs @ vals[arg, cols]
        dval = dval + probs @ da[left][arg, cols]
    return val, dval


def _tail_fill(h, t, dice, hot_mode, settle, roll, A, AC, dA, dAC, R, RC, V, dR, dRC, dV, grad, s_ok, s_val, dh=None):
    """Write the tail row (index t) of every table for the hot-state value h."""
    A[t, 0] = h
    if grad:
        dA[t, 0] = 0.0 if dh is None else dh
    for n in range(1, dice + 1):
        settle(t, n, *roll(t, n, A, dA))
        A[t, n] = V[t, n]
        if grad:
            dA[t, n] = dV[t, n]
    _fill_confirm(t, A, dA, AC, dAC, s_ok, s_val, grad)
    if hot_mode == CONFIRM:
        RC[t], d = roll(t, dice, AC, dAC)
        if grad:
            dRC[t] = d
    A[t, 0] = V[t, dice] if hot_mode == FREE else (R[t, dice] if hot_mode == MUST_ROLL else RC[t])
    if grad:
        dA[t, 0] = dV[t, dice] if hot_mode == FREE else (dR[t, dice] if hot_mode == MUST_ROLL else dRC[t])
    if not s_ok[t]:
        AC[t] = A[t]
        if grad:
            dAC[t] = dA[t]


def turn_ends(rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad):
    """:func:`turn_dp` and the end distribution of its decisions, as the compiled
    kernel's ``turn_ends``: ``(start, dstart, ends, bust_p, win_p)`` with ``ends`` the
    banked and mid-turn ends together (the twin composes the two passes it has)."""
    start, dstart, V, R, RC = turn_dp(rolls, stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad, True)
    stop_p, forced_p, bust_p, win_p = end_distribution(rolls, stop_ok, stop_val, forced_ok, forced_val, V, R, RC)
    return start, dstart, stop_p + forced_p, bust_p, win_p


def end_distribution(rolls, stop_ok, stop_val, forced_ok, forced_val, V, R, RC):
    """See :func:`thousand.kernel.end_distribution`: ``(stop_p, forced_p, bust_p, win_p)``."""
    return _end_distribution(*rolls.arrays(), stop_ok, stop_val, forced_ok, forced_val, V, R, RC)


def _end_distribution(
    cls_ptr,
    cls_prob,
    cls_instant,
    opt_ptr,
    opt_points,
    opt_used,
    dice,
    hot_mode,
    stop_ok,
    stop_val,
    forced_ok,
    forced_val,
    V,
    R,
    RC,
):
    T = stop_ok.shape[0] - 1
    L = T + 2
    K = V.shape[2]
    N = dice
    s_ok = np.append(stop_ok, stop_ok[-1]).astype(bool)
    f_ok = np.append(forced_ok, forced_ok[-1]).astype(bool)
    s_val = np.vstack([stop_val, stop_val[-1:]])
    f_val = np.vstack([forced_val, forced_val[-1:]])
    # A and AC as in turn_dp, rebuilt from the solved tables
    A = np.empty((L, N + 1, K))
    A[:, 1:] = V[:, 1:]
    A[:, 0] = V[:, N] if hot_mode == FREE else (R[:, N] if hot_mode == MUST_ROLL else RC)
    A[f_ok] = f_val[f_ok][:, None, :]
    AC = A.copy()
    sel = s_ok & ~f_ok
    AC[sel] = s_val[sel][:, None, :]
    # the solved turn banks where it may and banking is worth at least rolling on (ties bank)
    bank = s_ok[:, None, None] & (s_val[:, None, :] >= R)
    per_n = _options_by_dice(cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, N)
    cols = lambda a: np.broadcast_to(a[:, None], (L, K))  # noqa: E731
    return _forward(per_n, N, hot_mode, cols(s_ok), cols(f_ok), bank, A, AC)


def ranked_end_distribution(rolls, stop_ok, forced_ok, bank, rank, rank_c):
    """See :func:`thousand.kernel.ranked_end_distribution`: ``(stop_p, forced_p, bust_p, win_p)``."""
    cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, N, hot_mode = rolls.arrays()
    s_ok = np.vstack([stop_ok, stop_ok[-1:]]).astype(bool)
    f_ok = np.vstack([forced_ok, forced_ok[-1:]]).astype(bool)
    per_n = _options_by_dice(cls_ptr, cls_prob, cls_instant, opt_ptr, opt_points, opt_used, N)
    return _forward(per_n, N, hot_mode, s_ok, f_ok, bank.astype(bool), rank, rank if rank_c is None else rank_c)


def _forward(per_n, N, hot_mode, s_ok, f_ok, bank, A, AC):
    """How turns end under given decisions, one column each: a forward pass of
    probability mass over (total, dice left) from the first roll of every die. Arrivals
    at a forced end end there; arrivals by a confirming roll bank at once where banking
    is allowed; a decision (t, m) banks where ``s_ok[t]`` and ``bank[t, m]``, else rolls
    m dice; a roll's scoring class takes its first option of the highest ``A`` (``AC``
    after a confirming roll) at the (total, dice left) it leads to. ``s_ok``, ``f_ok``
    (L, K); ``bank``, ``A``, ``AC`` (L, N + 1, K); row L - 1 stands for every total above
    L - 2 and feeds itself through hot dice, followed until its mass is at most 1e-17.
    Returns ``(stop_p, forced_p, bust_p, win_p)`` with the rows above L - 2 counted at
    L - 2."""
    L, K = s_ok.shape
    T = L - 2
    stop_p = np.zeros((L, K))
    forced_p = np.zeros((L, K))
    bust_p = np.zeros(K)
    win_p = np.zeros(K)
    size = L * (N + 1) * K
    arr = np.zeros(size)  # mass arriving at (t, dice left) after a plain roll, flat (L, N + 1, K)
    arr_c = np.zeros(size)  # ... after a confirming roll
    cols = np.arange(K)[None, :]

    def throw(t, n, mass, table, target):
        nonlocal bust_p, win_p
        probs, pts, left, seg, p_bust, p_inst = per_n[n - 1]
        bust_p = bust_p + p_bust * mass
        win_p = win_p + p_inst * mass
        if len(probs):
            tt = np.minimum(t + pts, L - 1)
            arg = _segment_argmax(table[tt, left], seg, len(seg))  # (classes, K): the option taken
            where = (tt[arg] * (N + 1) + left[arg]) * K + cols
            # a roll reaches a few rows past t only: add into that span, not into all of target
            lo, hi = int(where.min()), int(where.max()) + 1
            target[lo:hi] += np.bincount(
                (where - lo).ravel(), (probs[:, None] * mass[None, :]).ravel(), minlength=hi - lo
            )

    def route(t):
        """Send the arrivals at row t on: banks and forced ends recorded, rolls thrown."""
        lo, hi = t * (N + 1) * K, (t + 1) * (N + 1) * K
        a, c = arr[lo:hi].reshape(N + 1, K).copy(), arr_c[lo:hi].reshape(N + 1, K).copy()
        arr[lo:hi] = 0.0
        arr_c[lo:hi] = 0.0
        f, sk = f_ok[t], s_ok[t]
        forced_p[t] += np.where(f, a.sum(axis=0) + c.sum(axis=0), 0.0)
        a *= ~f
        c *= ~f
        stop_p[t] += np.where(sk, c.sum(axis=0), 0.0)  # a confirming roll that scores banks at once
        a += c * ~sk
        dec = a[1:].copy()  # decisions at m = 1..N dice
        hot_roll = np.zeros(K)
        if hot_mode == FREE:
            dec[N - 1] += a[0]
        else:
            hot_roll = a[0]
        b = bank[t, 1:] & sk  # a rule banks only where banking is allowed
        stop_p[t] += (dec * b).sum(axis=0)
        rolls = dec * ~b
        if hot_mode == MUST_ROLL:
            rolls[N - 1] += hot_roll
        for n in range(1, N + 1):
            if rolls[n - 1].any():
                throw(t, n, rolls[n - 1], A, arr)
        if hot_mode == CONFIRM and hot_roll.any():
            throw(t, N, hot_roll, AC, arr_c)

    throw(0, N, np.ones(K), A, arr)  # a turn starts by rolling every die
    for t in range(1, L - 1):
        route(t)
    tail = slice((L - 1) * (N + 1) * K, size)
    for _ in range(100_000):  # the row above T: its only cycle is hot dice
        if arr[tail].sum() + arr_c[tail].sum() <= 1e-17:
            break
        route(L - 1)
    stop_p[T] += stop_p[L - 1]
    forced_p[T] += forced_p[L - 1]
    return stop_p[: T + 1], forced_p[: T + 1], bust_p, win_p


def rows_minus(indptr, cols, vals, x, c, out, threads):
    """``out[i] = c[i] - sum_e vals[e] * x[cols[e]]`` over row i's entries
    ``indptr[i]:indptr[i+1]`` (the compiled kernel spreads the rows over threads)."""
    m = len(indptr) - 1
    if m <= 0:
        return
    from scipy import sparse

    A = sparse.csr_matrix((vals[: indptr[-1]], cols[: indptr[-1]], indptr), shape=(m, len(x)))
    out[:m] = c[:m] - A @ x


def solve_links(succ, a, b, out):
    """Solve ``out[k] + a[k] * out[succ[k]] = b[k]`` (``out[k] = b[k]`` where
    ``succ[k] < 0``) as one sparse LU solve (the compiled kernel follows the links)."""
    m = len(b)
    succ = np.asarray(succ, dtype=np.int64)
    if len(succ) != m or len(a) != m or len(out) < m:
        raise ValueError("succ, a and b need one entry per row, out at least as many")
    if m and succ.max() >= m:
        raise ValueError("succ must index the rows (or be negative)")
    if m == 0:
        return
    import warnings

    from scipy import sparse
    from scipy.sparse import linalg as spla

    r = np.flatnonzero(succ >= 0)
    A = sparse.identity(m, format="csr") + sparse.csr_matrix((np.asarray(a, float)[r], (r, succ[r])), shape=(m, m))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sparse.SparseEfficiencyWarning)
        warnings.simplefilter("ignore", spla.MatrixRankWarning)
        x = spla.spsolve(A.tocsc(), np.asarray(b, dtype=float))
    if not np.all(np.isfinite(x)):
        raise ZeroDivisionError("solve_links: a cycle's rows are singular (the product of its -a is 1)")
    out[:m] = x


class LevelSweep:
    """Gauss-Seidel sweeps of a policy round's correction system over its levels:
    ``levels`` holds per level, top down, ``(rows, rho, indptr, cols, vals, succ, a)``;
    a sweep sets level by level ``x[rows] = (I + D)^-1 (rho - O x)`` with O the CSR rows
    (:func:`rows_minus`) at the current x and D the links (:func:`solve_links`)."""

    def __init__(self, levels, size):
        self.size = int(size)
        self.levels = []
        for rows, rho, indptr, cols, vals, succ, a in levels:
            rows, indptr, succ = (np.asarray(x, dtype=np.int64) for x in (rows, indptr, succ))
            m = len(rows)
            if len(rho) != m or len(succ) != m or len(a) != m or len(indptr) != m + 1:
                raise ValueError("a level needs rho, succ and a per row, indptr per row plus one")
            if m and (rows.min() < 0 or rows.max() >= self.size or succ.max() >= m):
                raise ValueError("rows must index x, succ the level's rows (or be negative)")
            if indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[m] > len(cols) or indptr[m] > len(vals):
                raise ValueError("indptr must start at 0, not decrease, and fit cols/vals")
            self.levels.append(
                (
                    rows,
                    np.asarray(rho, dtype=float),
                    indptr,
                    np.asarray(cols),
                    np.asarray(vals),
                    succ,
                    np.asarray(a, dtype=float),
                )
            )

    def sweep(self, x, threads=0):
        """One sweep, in place on ``x``; returns the largest change of an entry."""
        if len(x) != self.size:
            raise ValueError("x must have the size the sweep was built for")
        change = 0.0
        for rows, rho, indptr, cols, vals, succ, a in self.levels:
            m = len(rows)
            if not m:
                continue
            if indptr[-1] and (cols[: indptr[-1]].min() < 0 or cols[: indptr[-1]].max() >= self.size):
                raise ValueError("cols must index x")
            rhs = np.empty(m)
            rows_minus(indptr, cols, vals, x, rho, rhs, threads)
            change = max(change, _settle(x, rows, succ, a, rhs))
        return change


def _settle(x, rows, succ, a, rhs) -> float:
    """A level's end of a sweep: its links solved (:func:`solve_links`) on the right-hand
    side ``rhs``, the values written to ``x[rows]``; returns the largest change."""
    out = np.empty(len(rows))
    try:
        solve_links(succ, a, rhs, out)
    except ZeroDivisionError:
        raise ZeroDivisionError("a level's links are singular (the product of a cycle's -a is 1)") from None
    change = float(np.max(np.abs(out - x[rows])))
    x[rows] = out
    return change


def _places(cnt):
    """Runs of ``cnt[k]`` entries laid end to end: each entry's place in its run (0, 1, ...)."""
    cnt = np.asarray(cnt, dtype=np.int64)
    return np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)


class PatternSweep:
    """Gauss-Seidel sweeps over levels whose rows are turns drawn from shared patterns
    (see :meth:`thousand.kernel.Backend.pattern_sweep`, which checks the input once).
    Row k of a level, pattern p of store s and opponent j, reads

        x[rows[k]] = cst[p] + sum_e prob[e] * x[base_s + next[g_e] * n + opp(g_e, j)]
                     + bust_p[p] * x[base_s + bust[mover[p]] * n + j]

    with ``opp`` the opponent after the end at plan row ``g_e`` (:func:`end_opponents`)
    and a first-seat win's term ``prob[e] * won_s[j, win_col[g_e]]``; where ``succ[k] >=
    0`` the bust is the level's link to row ``succ[k]``, solved exactly with the level's
    other links (:func:`solve_links`)."""

    def __init__(self, plans, stores, levels, size):
        """``stores`` as :meth:`thousand.kernel.Backend.pattern_sweep` passes them on: ``(ptr,
        ends, prob, bust_p, cst, mover, base, won, wptr, wcol, wprob)``, the ends that go on
        apart from the first-seat wins (``wptr``, their columns of ``won`` and chances)."""
        self.size, self.n = int(size), len(plans.score)
        self.plans = plans
        self.won = [s[7] for s in stores]
        self.wins = [(np.asarray(s[8]), np.asarray(s[9], dtype=np.int64), np.asarray(s[10])) for s in stores]
        cat = [np.concatenate([np.asarray(s[f]) for s in stores]) if stores else np.zeros(0) for f in range(1, 6)]
        ends, prob, self.bust_p, self.cst, self.mover = cat
        self.mover = self.mover.astype(np.int64)
        ptrs, at = [], 0  # the stores' entries, one after another
        for s in stores:
            ptrs.append(np.asarray(s[0][:-1], dtype=np.int64) + at)
            at += len(s[1])
        self.ptr = np.concatenate([*ptrs, [at]]).astype(np.int64)
        # one entry past the last (plan row 0, chance 0), which a bust's place in rows() reads
        self.ends, self.prob = np.append(ends, 0).astype(np.int64), np.append(prob, 0.0)
        self.base = np.repeat([int(s[6]) for s in stores], [len(s[3]) for s in stores]).astype(np.int64)
        self.levels = [tuple(np.asarray(a, dtype=np.int64) for a in lv) for lv in levels]
        # each row's constant: cst and its first-seat wins, which read no x (summed once, as compiled)
        self.consts = [self.cst[lv[1]] + self._won(lv[1], lv[2]) for lv in self.levels]

    def rows(self, L):
        """Level L's rows spelled out: ``(indptr, cols, vals, a, c)``, the CSR of every
        entry that reads x (the bust too, where it is no link), each row's link coefficient
        (-bust_p, or 0) and its constant (cst and its win ends' worth); the right-hand side
        is ``c + CSR @ x``."""
        p, n = self.plans, self.n
        _, pat, opp, succ = self.levels[L]
        m = len(pat)
        free = succ < 0
        cnt = self.ptr[pat + 1] - self.ptr[pat] + free
        row = np.repeat(np.arange(m), cnt)
        at = _places(cnt)  # place in the row
        own = at < np.repeat(cnt - free, cnt)  # the pattern's ends; then the bust
        e = self.ptr[pat][row] + at
        e[~own] = 0
        g, j, i = self.ends[e], opp[row], self.mover[pat][row]
        y = end_opponent(p, i, g, j)
        cols = self.base[pat][row] + np.where(own, p.next[g] * n + y, p.bust[i] * n + j)
        vals = np.where(own, self.prob[e], self.bust_p[pat][row])
        indptr = np.concatenate([[0], np.cumsum(cnt)]).astype(np.int64)
        return indptr, cols, vals, np.where(free, 0.0, -self.bust_p[pat]), self.consts[L]

    def _won(self, pat, opp):
        """Each row's first-seat wins, worth ``won[j, col]`` against its opponent j."""
        out = np.zeros(len(pat))
        first = np.concatenate([[0], np.cumsum([len(w[0]) - 1 for w in self.wins])])
        for s, (wptr, wcol, wprob) in enumerate(self.wins):
            k = np.flatnonzero((pat >= first[s]) & (pat < first[s + 1]))
            q = pat[k] - first[s]
            cnt = wptr[q + 1] - wptr[q]
            if not cnt.sum():
                continue
            row = np.repeat(k, cnt)
            e = np.repeat(wptr[q], cnt) + _places(cnt)
            np.add.at(out, row, wprob[e] * self.won[s][opp[row], wcol[e]])
        return out

    def sweep(self, x, threads=0):
        """One sweep, in place on ``x``; returns the largest change of an entry."""
        if len(x) != self.size:
            raise ValueError("x must have the size the sweep was built for")
        change = 0.0
        for L, (rows, _pat, _, succ) in enumerate(self.levels):
            m = len(rows)
            if not m:
                continue
            indptr, cols, vals, a, c = self.rows(L)
            rhs = c + np.bincount(np.repeat(np.arange(m), np.diff(indptr)), vals * x[cols], minlength=m)
            change = max(change, _settle(x, rows, succ, a, rhs))
        return change


def rows_split(cap_ptr, cnt, cols, vals, local, drop=0.0, links=False, threads=0):
    """Compact rows written into capacity slots and split off the entries whose column
    has ``local[col] >= 0`` (see :func:`thousand.kernel.rows_split`); ``drop > 0``
    leaves out the entries below it and gives float32 ``out_vals``; ``links``: only
    each row's largest such entry (the first of equals) is split off. ``threads``: one."""
    m = len(cnt)
    cnt = np.asarray(cnt, dtype=np.int64)
    sel = np.repeat(np.asarray(cap_ptr[:m], dtype=np.int64), cnt) + _places(cnt)
    c, v = np.asarray(cols)[sel], np.asarray(vals)[sel]
    if len(c) and (c.min() < 0 or c.max() > 2**31 - 1 or (local is not None and c.max() >= len(local))):
        raise ValueError("columns must be pair indices below 2**31 (and inside local)")
    row = np.repeat(np.arange(m), cnt)
    if drop > 0:
        kept = np.abs(v) >= drop
        c, v, row = c[kept], v[kept], row[kept]
    inside = (local[c] >= 0) if local is not None else np.zeros(len(c), dtype=bool)
    if links and inside.any():
        # per row, the first entry of the largest |value| among the local ones
        k = np.flatnonzero(inside)
        order = np.lexsort((k, -np.abs(v[k]), row[k]))
        first = np.ones(len(order), dtype=bool)
        first[1:] = row[k[order]][1:] != row[k[order]][:-1]
        inside = np.zeros(len(c), dtype=bool)
        inside[k[order[first]]] = True
    out = ~inside
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(row[out], minlength=m), out=indptr[1:])
    out_vals = v[out].astype(np.float32) if drop > 0 else v[out]
    return (
        indptr,
        c[out].astype(np.int32),
        out_vals,
        row[inside].astype(np.int64),
        local[c[inside]].astype(np.int64) if local is not None else np.zeros(0, np.int64),
        v[inside],
    )


# --------------------------------------------------------------------------- duel loops


def end_opponents(plans, i, rows, Y):
    """The opponent that the ends ``rows`` (rows of ``plans``, all of mover ``i``) hand the
    game to, against each opponent state in ``Y``: an array (len(rows), len(Y)) of
    states. An end that put the mover on the barrel pushes an opponent who is on it off
    (``pushed``); then an opponent whose score the mover's passed (``score[i] < s <
    after``) is overtaken. The compiled kernel's rule, written once for numpy: the pure
    twin's turn ends and the duel solver's interface (:meth:`thousand.solvers.duel.DuelModel.interface`)
    take it from here. ``plans``: anything with the arrays of :class:`Plans`."""
    return end_opponent(plans, i, np.asarray(rows)[:, None], np.asarray(Y)[None, :])


def end_opponent(plans, i, g, y):
    """:func:`end_opponents` element by element (broadcasting ``i``, ``g``, ``y``): the
    opponent ``y`` after mover ``i``'s end at plan row ``g``."""
    y1 = np.where(plans.climbed[g].astype(bool) & plans.on_barrel[y].astype(bool), plans.pushed[y], y)
    s = plans.score[y1]
    return np.where((plans.score[i] < s) & (s < plans.after[g]), plans.overtaken[y1], y1)


def _mover_ends(plans, Q, i, lo, hi):
    """Mover i's turn ends against opponents lo..hi-1, as the compiled kernel builds them:
    ``(stop_ok, forced_ok, nxt, opp, ends, bust)`` with ``opp[t, k]`` the opponent after
    the end at total t (pushed off, overtaken) and ``ends`` its value 1 - Q[nxt, opp]
    (a win: 1, or with ``win_col``/``win_L`` (equal_turns) 1 - win_L[y, win_col[t]])."""
    p = plans
    Y = np.arange(lo, hi)
    a, b = p.ptr[i], p.ptr[i + 1]
    stop_ok, forced_ok, nxt = p.stop_ok[a:b], p.forced_ok[a:b], p.next[a:b]
    opp = end_opponents(p, i, np.arange(a, b), Y)
    ends = 1.0 - Q[np.maximum(nxt, 0)[:, None], opp]
    ends[nxt == -1] = 1.0
    if p.win_col is not None:  # equal_turns: the opponent's last turn
        col = p.win_col[a:b]
        last = (nxt == -1) & (col >= 0)
        ends[last] = 1.0 - p.win_L[lo:hi][:, col[last]].T
    ends[(stop_ok | forced_ok) == 0] = 0.0
    bust = np.ascontiguousarray(1.0 - Q[p.bust[i], lo:hi])
    return stop_ok, forced_ok, nxt, opp, np.ascontiguousarray(ends), bust


def duel_level(rolls, plans, Q, movers, opp_lo, opp_hi, out_v, out_d, out_ptr, grad, threads):
    """See :func:`thousand.kernel.duel_level`: mover ``movers[j]`` against opponents
    ``opp_lo[j]:opp_hi[j]``, one :func:`turn_dp` per mover with one column per opponent;
    R(0, N) to ``out_v[out_ptr[j]:out_ptr[j+1]]`` (the bust derivative to ``out_d``)."""
    for j in range(len(movers)):
        i, lo, hi = movers[j], opp_lo[j], opp_hi[j]
        stop_ok, forced_ok, _, _, ends, bust = _mover_ends(plans, Q, i, lo, hi)
        start, dstart, *_ = turn_dp(rolls, stop_ok, ends, forced_ok, ends, bust, np.ones(hi - lo), grad, False)
        out_v[out_ptr[j] : out_ptr[j + 1]] = start
        if grad:
            out_d[out_ptr[j] : out_ptr[j + 1]] = dstart


def _check_frames(plans, frame_movers, col_ptr, col_movers, col_opps, col_row0) -> int:
    """The checks of the compiled kernel's frames (ValueError); returns the columns."""
    F, C = len(frame_movers), len(col_movers)
    col_ptr = np.asarray(col_ptr, dtype=np.int64)
    if len(col_ptr) != F + 1 or col_ptr[0] != 0 or col_ptr[-1] != C or np.any(np.diff(col_ptr) < 0):
        raise ValueError("col_ptr must run from 0 to the number of columns, one entry per frame plus one")
    if len(col_opps) != C or len(col_row0) != C:
        raise ValueError("col_movers, col_opps and col_row0 need one entry per column")
    n = len(plans.ptr) - 1
    if C and (
        min(np.min(col_movers), np.min(col_opps), np.min(frame_movers) if F else 0) < 0
        or max(np.max(col_movers), np.max(col_opps)) >= n
        or (F and np.max(frame_movers) >= n)
        or np.min(col_row0) < 0
    ):
        raise ValueError("frame and column movers, opponents must be state indices, rows >= 0")
    ptr = plans.ptr
    for f in range(F):
        fi = frame_movers[f]
        Tf = ptr[fi + 1] - ptr[fi] - 1
        for c in range(col_ptr[f], col_ptr[f + 1]):
            i, r0 = col_movers[c], col_row0[c]
            Ti = ptr[i + 1] - ptr[i] - 1
            mine, theirs = slice(ptr[i] + 1, ptr[i + 1]), slice(ptr[fi] + r0 + 1, ptr[fi + 1])
            if (
                Ti != Tf - r0
                or np.any(plans.stop_ok[mine] != plans.stop_ok[theirs])
                or np.any(plans.forced_ok[mine] != plans.forced_ok[theirs])
            ):
                raise ValueError("a column's turn is not its frame's rows shifted (horizon, banking or forced ends)")
    return C


def duel_frames(rolls, plans, Q, frame_movers, col_ptr, col_movers, col_opps, col_row0, out_v, out_d, grad, threads):
    """See :func:`thousand.kernel.duel_frames`: each column is its own mover's turn
    against its opponent (one :func:`duel_level` pair); the frame only has to be
    consistent with it (the compiled kernel runs a frame's columns as one turn DP)."""
    C = _check_frames(plans, frame_movers, col_ptr, col_movers, col_opps, col_row0)
    one = np.array([0, 1], dtype=np.int64)
    for c in range(C):
        v, d = np.empty(1), np.empty(1)
        duel_level(rolls, plans, Q, [col_movers[c]], [col_opps[c]], [col_opps[c] + 1], v, d, one, grad, threads)
        out_v[c] = v[0]
        if grad:
            out_d[c] = d[0]


def duel_policy(
    rolls, plans, Q, movers, opp_lo, opp_hi, out_v, out_ptr, out_c, cap_ptr, out_cols, out_vals, out_cnt, threads
):
    """See :func:`thousand.kernel.duel_policy`: :func:`duel_level` without the gradient,
    and each pair's greedy policy as a sparse row from :func:`end_distribution`."""
    n = Q.shape[0]
    for j in range(len(movers)):
        i, lo, hi = movers[j], opp_lo[j], opp_hi[j]
        if hi <= lo:
            continue
        stop_ok, forced_ok, nxt, opp, ends, bust = _mover_ends(plans, Q, i, lo, hi)
        start, _, V, R, RC = turn_dp(rolls, stop_ok, ends, forced_ok, ends, bust, np.ones(hi - lo), False, True)
        stop_p, forced_p, bust_p, win_p = end_distribution(rolls, stop_ok, ends, forced_ok, ends, V, R, RC)
        e = stop_p + forced_p
        for k in range(hi - lo):
            p = out_ptr[j] + k
            at, c = cap_ptr[p], 0.0
            for t in np.flatnonzero(e[1:, k]) + 1:
                m = e[t, k]
                if nxt[t] == -1:
                    c += m * ends[t, k]
                    continue
                c += m
                col = nxt[t] * n + opp[t, k]
                if at > cap_ptr[p] and out_cols[at - 1] == col:
                    out_vals[at - 1] += m  # the same pair as the total before: one entry
                    continue
                out_cols[at], out_vals[at] = col, m
                at += 1
            if bust_p[k] != 0.0:
                c += bust_p[k]
                out_cols[at], out_vals[at] = plans.bust[i] * n + lo + k, bust_p[k]
                at += 1
            out_c[p] = c + win_p[k]
            out_cnt[p] = at - cap_ptr[p]
        out_v[out_ptr[j] : out_ptr[j + 1]] = start


def duel_policy_frames(
    rolls,
    plans,
    Q,
    frame_movers,
    col_ptr,
    col_movers,
    col_opps,
    col_row0,
    out_v,
    out_c,
    cap_ptr,
    out_cols,
    out_vals,
    out_cnt,
    threads,
):
    """See :func:`thousand.kernel.duel_policy_frames`: each column as its own
    :func:`duel_policy` pair."""
    C = _check_frames(plans, frame_movers, col_ptr, col_movers, col_opps, col_row0)
    one = np.array([0, 1], dtype=np.int64)
    for c in range(C):
        y = col_opps[c]
        v, oc, cnt = np.empty(1), np.empty(1), np.zeros(1, dtype=np.int64)
        cap = int(cap_ptr[c + 1] - cap_ptr[c])
        cols, vals = np.empty(cap, dtype=np.int64), np.empty(cap)
        duel_policy(
            rolls, plans, Q, [col_movers[c]], [y], [y + 1], v, one, oc, np.array([0, cap]), cols, vals, cnt, threads
        )
        out_v[c], out_c[c], out_cnt[c] = v[0], oc[0], cnt[0]
        out_cols[cap_ptr[c] : cap_ptr[c] + cnt[0]] = cols[: cnt[0]]
        out_vals[cap_ptr[c] : cap_ptr[c] + cnt[0]] = vals[: cnt[0]]
