"""The compiled kernel (``thousand.kernel._kernel``) and its pure twin (``thousand.kernel._pure``) agree.

Roll classes must be identical array for array on random rulesets; the turn DP
must agree to 1e-12 (start, dstart and the full tables V, R, RC) on random
inputs in every hot-dice mode. Skipped when the extension is not built.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

_kernel = pytest.importorskip("thousand.kernel._kernel")

from thousand import kernel  # noqa: E402
from thousand.kernel import _pure  # noqa: E402
from thousand.rules import from_mapping, load_ruleset  # noqa: E402
from thousand.rules.scoring import scoring_groups  # noqa: E402

TOL = 1e-12
PURE, COMPILED = kernel.backend("pure"), kernel.backend("compiled")


def rolls(impl, tab, hot=None):
    """The backend ``impl``'s Rolls of the table ``tab`` (with another hot-dice mode)."""
    return impl.Rolls(
        tab.cls_ptr,
        tab.cls_prob,
        tab.cls_instant,
        tab.opt_ptr,
        tab.opt_points,
        tab.opt_used,
        tab.dice,
        tab.hot_mode if hot is None else hot,
    )


def plans(impl, p, **change):
    """The backend ``impl``'s Plans of the DuelPlans ``p`` (with some arrays changed)."""
    a = dict(
        ptr=p.ptr,
        stop_ok=p.stop_ok,
        forced_ok=p.forced_ok,
        next=p.next,
        after=p.after,
        climbed=p.climbed,
        bust=p.bust,
        score=p.score,
        overtaken=p.overtaken,
        pushed=p.pushed,
        on_barrel=p.on_barrel,
        win_col=p.win_col,
        win_L=p.win_L,
    )
    a.update(change)
    return impl.Plans(**a)


def _fast(n: int):
    return settings(
        max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
    )


POINTS = st.sampled_from([5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 250, 500])


@st.composite
def rulesets(draw, max_dice: int = 6):
    """A random small ruleset on six-faced dice (as a TOML-like mapping, validated)."""
    dice = draw(st.integers(1, max_dice))
    faces = 6
    singles = {str(f): draw(POINTS) for f in sorted(draw(st.sets(st.integers(1, faces), min_size=1, max_size=3)))}
    kinds: dict[str, dict[str, int]] = {}
    for count in range(2, dice + 1):
        fs = draw(st.sets(st.integers(1, faces), max_size=3))
        if fs:
            kinds[str(count)] = {str(f): draw(POINTS) for f in sorted(fs)}
    straights = []
    if dice >= 2 and draw(st.booleans()):
        size = draw(st.integers(2, dice))
        lo = draw(st.integers(1, faces - size + 1))
        straights.append({"faces": list(range(lo, lo + size)), "points": draw(POINTS)})
    patterns = []
    if dice >= 2 and draw(st.booleans()):
        size = draw(st.integers(1, 2))
        count = draw(st.integers(2, max(2, dice // size)))
        if size * count <= dice:
            patterns.append({"size": size, "count": count, "distinct": draw(st.booleans()), "points": draw(POINTS)})
    instant = []
    if draw(st.booleans()):
        instant.append({"face": draw(st.integers(1, faces)), "count": draw(st.integers(1, dice))})
    mapping = {
        "name": "random",
        "dice": dice,
        "faces": faces,
        "keep": draw(st.sampled_from(["all", "any"])),
        "hot_dice": draw(st.sampled_from(["must_roll", "free", "confirm"])),
        "goal": 1000,
        "scoring": {
            "singles": singles,
            "kinds": kinds,
            "straights": straights,
            "patterns": patterns,
            "instant_win": instant,
        },
    }
    if mapping["keep"] == "any":
        mapping["compose"] = draw(st.sampled_from(["best", "any"]))
    return from_mapping(mapping)


def _assert_same_classes(rs, n):
    g = scoring_groups(rs)
    args = (g.counts, g.points, g.instant, n, rs.faces, rs.keep == "any", rs.unit, rs.compose == "any")
    a = _pure.roll_classes(*args)
    b = _kernel.roll_classes(*args)
    assert len(a) == len(b) == 7
    for x, y in zip(a, b):
        assert x.dtype == y.dtype
        assert x.shape == y.shape
        np.testing.assert_array_equal(x, y)


# --------------------------------------------------------------------------- rolls


@_fast(60)
@given(rulesets())
def test_roll_classes_identical(rs):
    for n in range(1, rs.dice + 1):
        _assert_same_classes(rs, n)


@pytest.mark.parametrize("name", ["plain", "pig"])
def test_roll_classes_presets(name):
    rs = load_ruleset(name)
    for n in range(1, rs.dice + 1):
        _assert_same_classes(rs, n)
    assert _kernel.IMPLEMENTATION == "compiled"


def test_roll_classes_plain_counts():
    # RULES/DESIGN: 5 dice have 252 sorted rolls; classes are far fewer.
    rc = COMPILED.roll_classes(load_ruleset("plain"), 5)
    assert rc.rolls.shape == (252, 6)
    assert int(rc.weight.sum()) == 6**5
    assert len(rc) == len(PURE.roll_classes(load_ruleset("plain"), 5))


# --------------------------------------------------------------------------- turn DP


def _bust_everywhere(tab) -> bool:
    """Every dice count can bust: then the hot-dice cycle ends with probability 1."""
    for n in range(1, tab.dice + 1):
        lo, hi = tab.cls_ptr[n], tab.cls_ptr[n + 1]
        cnt = tab.opt_ptr[lo + 1 : hi + 1] - tab.opt_ptr[lo:hi]
        bust = (cnt == 0) & (tab.cls_instant[lo:hi] == 0)
        if not tab.cls_prob[lo:hi][bust].sum() > 0:
            return False
    return True


def _inputs(rng, T, K, p_stop, p_forced, tail_stop, tail_forced):
    stop_ok = (rng.random(T + 1) < p_stop).astype(np.uint8)
    forced_ok = (rng.random(T + 1) < p_forced).astype(np.uint8)
    stop_ok[T] = tail_stop
    forced_ok[T] = tail_forced
    scale = rng.choice([1.0, 100.0])
    stop_val = rng.random((T + 1, K)) * scale
    forced_val = rng.normal(size=(T + 1, K)) * scale
    bust_val = rng.normal(size=K) * scale
    win_val = rng.random(K) * scale + scale
    return stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val


def _compare(tab, hot, inputs, grad=True, full=True):
    a = _pure.turn_dp(rolls(_pure, tab, hot), *inputs, grad, full)
    b = _kernel.turn_dp(rolls(_kernel, tab, hot), *inputs, grad, full)
    assert len(a) == len(b) == 5
    for name, x, y in zip(("start", "dstart", "V", "R", "RC"), a, b):
        if x is None:
            assert y is None, name
            continue
        assert y is not None, name
        assert x.shape == y.shape, name
        assert y.dtype == np.float64, name
        scale = max(1.0, float(np.max(np.abs(x)))) if x.size else 1.0
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL * scale, err_msg=name)
    return a, b


@st.composite
def dp_cases(draw):
    rs = draw(rulesets(max_dice=5))
    T = draw(st.integers(0, 30))
    K = draw(st.integers(1, 4))
    hot = draw(st.sampled_from([kernel.MUST_ROLL, kernel.FREE, kernel.CONFIRM]))
    p_stop = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    p_forced = draw(st.sampled_from([0.0, 0.1, 0.3]))
    tail_stop = draw(st.booleans())
    tail_forced = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    return rs, T, K, hot, p_stop, p_forced, tail_stop, tail_forced, seed


def _case(case):
    """(roll table, hot mode, DP inputs) of a drawn case; cases where some dice count
    cannot bust are discarded (their hot-dice cycle need not end)."""
    rs, T, K, hot, p_stop, p_forced, tail_stop, tail_forced, seed = case
    tab = COMPILED.roll_table(rs)
    assume(_bust_everywhere(tab))
    rng = np.random.default_rng(seed)
    return tab, hot, _inputs(rng, T, K, p_stop, p_forced, tail_stop, tail_forced)


@_fast(100)
@given(dp_cases())
def test_turn_dp_agrees(case):
    tab, hot, inputs = _case(case)
    _compare(tab, hot, inputs, grad=True, full=True)
    # without the full tables (ring storage when T is long) and without the gradient
    _compare(tab, hot, inputs, grad=True, full=False)
    _compare(tab, hot, inputs, grad=False, full=False)


@_fast(40)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([0, 1, 2]),
    st.integers(1, 4),
    st.integers(0, 80),
    st.booleans(),
    st.booleans(),
)
def test_turn_dp_long_turns_pig(seed, hot, K, T, tail_stop, tail_forced):
    """Pig adds at most 6 per roll, so long turns use the ring storage."""
    tab = COMPILED.roll_table(load_ruleset("pig"))
    rng = np.random.default_rng(seed)
    inputs = _inputs(rng, T, K, 0.6, 0.1, tail_stop, tail_forced)
    a, b = _compare(tab, hot, inputs, grad=True, full=False)
    full = _kernel.turn_dp(rolls(_kernel, tab, hot), *inputs, True, True)
    # ring storage and full tables give the very same numbers
    np.testing.assert_array_equal(full[0], b[0])
    np.testing.assert_array_equal(full[1], b[1])


@pytest.mark.parametrize("K", [40, 150])
@pytest.mark.parametrize("hot", [0, 1, 2])
def test_turn_dp_long_turns_wide(hot, K):
    """Long turns with many columns: ring storage and wide blocks."""
    tab = COMPILED.roll_table(load_ruleset("pig"))
    rng = np.random.default_rng(K + hot)
    for tail_forced in (False, True):
        _compare(tab, hot, _inputs(rng, 90, K, 0.6, 0.1, True, tail_forced), grad=True, full=False)
        _compare(tab, hot, _inputs(rng, 90, K, 0.6, 0.1, False, tail_forced), grad=False, full=False)


@pytest.mark.parametrize("hot", ["must_roll", "free", "confirm"])
@pytest.mark.parametrize("K", [1, 3, 150])
def test_turn_dp_plain(hot, K):
    """The plain preset with a stop threshold, through the public wrapper; K = 150 spans
    two column blocks of the compiled kernel."""
    rs = load_ruleset("plain", [f"hot_dice={hot}"])
    T = 60
    rng = np.random.default_rng(K)
    stop_ok = np.ones(T + 1, np.uint8)
    stop_ok[:10] = 0
    stop_val = np.arange(T + 1, dtype=float)[:, None] + rng.random((T + 1, K))
    forced_ok = np.zeros(T + 1, np.uint8)
    forced_val = np.zeros((T + 1, K))
    bust_val = rng.normal(size=K)
    win_val = np.full(K, 200.0)
    res = []
    for b in (PURE, COMPILED):
        res.append(
            kernel.turn_dp(
                b.roll_table(rs), stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val, grad=True, full=True
            )
        )
    for name in ("start", "dstart", "V", "R", "RC"):
        x, y = getattr(res[0], name), getattr(res[1], name)
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL * max(1.0, np.abs(x).max()), err_msg=name)


def test_turn_dp_columns_independent():
    """A column's result does not depend on the other columns or on the block it falls in."""
    tab = COMPILED.roll_table(load_ruleset("plain"))
    T, K = 40, 150
    rng = np.random.default_rng(7)
    inputs = _inputs(rng, T, K, 0.7, 0.1, True, False)
    r = tab.rolls
    whole = _kernel.turn_dp(r, *inputs, True, False)
    stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val = inputs
    for k in (0, 63, 64, 149):
        one = _kernel.turn_dp(
            r,
            stop_ok,
            stop_val[:, k : k + 1],
            forced_ok,
            forced_val[:, k : k + 1],
            bust_val[k : k + 1],
            win_val[k : k + 1],
            True,
            False,
        )
        np.testing.assert_allclose(one[0], whole[0][k : k + 1], rtol=0, atol=1e-13)
        np.testing.assert_allclose(one[1], whole[1][k : k + 1], rtol=0, atol=1e-13)


def test_turn_dp_rejects_bad_shapes():
    tab = COMPILED.roll_table(load_ruleset("pig"))
    ok = np.ones(5, np.uint8)
    with pytest.raises(ValueError):
        _kernel.turn_dp(tab.rolls, ok, np.zeros((5, 2)), ok, np.zeros((5, 2)), np.zeros(3), np.zeros(3), False, False)


# --------------------------------------------------------------------------- end distribution


def _compare_end(tab, hot, inputs):
    stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val = inputs
    _, _, V, R, RC = _kernel.turn_dp(rolls(_kernel, tab, hot), *inputs, False, True)
    a = _pure.end_distribution(rolls(_pure, tab, hot), stop_ok, stop_val, forced_ok, forced_val, V, R, RC)
    b = _kernel.end_distribution(rolls(_kernel, tab, hot), stop_ok, stop_val, forced_ok, forced_val, V, R, RC)
    assert len(a) == len(b) == 4
    for name, x, y in zip(("stop_p", "forced_p", "bust_p", "win_p"), a, b):
        assert x.shape == y.shape, name
        assert y.dtype == np.float64, name
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL, err_msg=name)
    total = b[0].sum(axis=0) + b[1].sum(axis=0) + b[2] + b[3]
    np.testing.assert_allclose(total, 1.0, rtol=0, atol=1e-9)
    return b


@_fast(100)
@given(dp_cases())
def test_end_distribution_agrees(case):
    """Random rulesets and inputs, every hot-dice mode, K = 1..4."""
    tab, hot, inputs = _case(case)
    _compare_end(tab, hot, inputs)


@pytest.mark.parametrize("hot", [0, 1, 2])
def test_end_distribution_ties(hot):
    """Integer-valued ends make many exact ties (banking vs rolling, option vs option)."""
    tab = COMPILED.roll_table(load_ruleset("pig"))
    T, K = 25, 3
    stop_ok = np.ones(T + 1, np.uint8)
    stop_ok[:3] = 0
    stop_val = np.ones((T + 1, K))
    forced_ok = np.zeros(T + 1, np.uint8)
    forced_val = np.zeros((T + 1, K))
    inputs = (stop_ok, stop_val, forced_ok, forced_val, np.zeros(K), np.ones(K))
    _compare_end(tab, hot, inputs)


@pytest.mark.parametrize("hot", ["must_roll", "free", "confirm"])
def test_end_distribution_plain(hot):
    rs = load_ruleset("plain", [f"hot_dice={hot}"])
    tab = COMPILED.roll_table(rs)
    T, K = 60, 5
    rng = np.random.default_rng(3)
    stop_ok = np.ones(T + 1, np.uint8)
    stop_ok[:10] = 0
    stop_val = np.arange(T + 1, dtype=float)[:, None] + rng.random((T + 1, K))
    inputs = (stop_ok, stop_val, np.zeros(T + 1, np.uint8), np.zeros((T + 1, K)), rng.normal(size=K), np.full(K, 200.0))
    b = _compare_end(tab, tab.hot_mode, inputs)
    # through the public wrapper too
    tv = kernel.turn_dp(tab, *inputs, full=True)
    c = kernel.end_distribution(tab, *inputs[:4], tv)
    for x, y in zip(b, c):
        np.testing.assert_array_equal(x, y)


def _ranked_inputs(rng, tab, hot, T, K, p_stop, p_forced, ties):
    """Random per-column decisions for ranked_end_distribution: stop_ok, forced_ok (T+1, K),
    bank, rank, rank_c (T+2, dice+1, K); ``ties``: small integer ranks, many exact ties."""
    N = tab.dice
    stop_ok = (rng.random((T + 1, K)) < p_stop).astype(np.uint8)
    forced_ok = (rng.random((T + 1, K)) < p_forced).astype(np.uint8)
    shape = (T + 2, N + 1, K)
    bank = (rng.random(shape) < 0.4).astype(np.uint8)
    rank = rng.integers(0, 3, shape).astype(float) if ties else rng.normal(size=shape)
    rank_c = rng.normal(size=shape) if hot == kernel.CONFIRM else None
    return stop_ok, forced_ok, bank, rank, rank_c


@_fast(100)
@given(dp_cases(), st.booleans())
def test_ranked_end_distribution_agrees(case, ties):
    """A turn played by given decisions (banks anywhere, set-asides by rank, a confirming
    roll's own ranks), per-column rules: both kernels agree and every column's ends sum to 1."""
    rs, T, K, hot, p_stop, p_forced, *_, seed = case
    tab = COMPILED.roll_table(rs)
    assume(_bust_everywhere(tab))
    inputs = _ranked_inputs(np.random.default_rng(seed), tab, hot, T, K, p_stop, p_forced, ties)
    a = _pure.ranked_end_distribution(rolls(_pure, tab, hot), *inputs)
    b = _kernel.ranked_end_distribution(rolls(_kernel, tab, hot), *inputs)
    for name, x, y in zip(("stop_p", "forced_p", "bust_p", "win_p"), a, b):
        assert x.shape == y.shape, name
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL, err_msg=name)
    total = b[0].sum(axis=0) + b[1].sum(axis=0) + b[2] + b[3]
    np.testing.assert_allclose(total, 1.0, rtol=0, atol=1e-9)
    # a bank happens only where the column allows it (a forced end only where it is forced)
    assert not (b[0][(inputs[0] == 0) | (inputs[1] == 1)] > 0).any()
    assert not (b[1][inputs[1] == 0] > 0).any()


@pytest.mark.parametrize("hot", [0, 1, 2])
@pytest.mark.parametrize("impl", [_pure, _kernel])
def test_the_optimums_decisions_as_ranks_give_its_end_distribution(impl, hot):
    """The solved turn's own decisions, given as a rule -- banking where allowed and the
    bank is worth at least rolling on (S >= R), each class's set-aside by the arrival
    values A the turn DP maximises (V; at hot dice R(N) or RC by the mode; a forced end's
    value; after a confirming roll a bank's) -- end the turn as end_distribution says."""
    rs = load_ruleset("plain", [f"hot_dice={('must_roll', 'free', 'confirm')[hot]}"])
    tab = COMPILED.roll_table(rs)
    N, T, K = tab.dice, 50, 4
    rng = np.random.default_rng(11)
    stop_ok = np.ones(T + 1, np.uint8)
    stop_ok[:8] = 0
    forced_ok = (rng.random(T + 1) < 0.1).astype(np.uint8)
    stop_val = np.arange(T + 1, dtype=float)[:, None] + rng.random((T + 1, K))
    forced_val = rng.normal(size=(T + 1, K))
    inputs = (stop_ok, stop_val, forced_ok, forced_val, rng.normal(size=K), np.full(K, 200.0))
    _, _, V, R, RC = impl.turn_dp(rolls(impl, tab, hot), *inputs, False, True)
    want = impl.end_distribution(rolls(impl, tab, hot), stop_ok, stop_val, forced_ok, forced_val, V, R, RC)
    ext = lambda a: np.concatenate([a, a[-1:]])  # noqa: E731 -- row T + 1 repeats row T
    S, F, s_ok, f_ok = ext(stop_val), ext(forced_val), ext(stop_ok).astype(bool), ext(forced_ok).astype(bool)
    A = V.copy()
    A[:, 0] = (R[:, N], V[:, N], RC)[hot]
    A[f_ok] = F[f_ok][:, None, :]
    AC = A.copy()
    AC[s_ok & ~f_ok] = S[s_ok & ~f_ok][:, None, :]
    bank = s_ok[:, None, None] & (S[:, None, :] >= R)
    cols = lambda a: np.repeat(a[:, None], K, axis=1)  # noqa: E731
    got = impl.ranked_end_distribution(rolls(impl, tab, hot), cols(stop_ok), cols(forced_ok), bank, A, AC)
    for name, x, y in zip(("stop_p", "forced_p", "bust_p", "win_p"), want, got):
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL, err_msg=name)


def test_ranked_end_distribution_refuses_bad_shapes():
    tab = COMPILED.roll_table(load_ruleset("pig"))
    T, K, N1 = 5, 2, tab.dice + 1
    ok = np.ones((T + 1, K), np.uint8)
    good = np.zeros((T + 2, N1, K))
    for backend in (PURE, COMPILED):
        t = backend.roll_table(load_ruleset("pig"))
        with pytest.raises(ValueError, match="shape"):
            kernel.ranked_end_distribution(t, ok, ok, good, np.zeros((T + 1, N1, K)))
        with pytest.raises(ValueError, match="shape"):
            kernel.ranked_end_distribution(t, ok, ok[:, :1], good, good)
        with pytest.raises(ValueError, match="shape"):
            kernel.ranked_end_distribution(t, ok[0], ok[0], good, good)


def _compare_turn_ends(tab, hot, inputs, twin=True):
    """Compiled ``turn_ends`` (the blocked forward pass) against the compiled
    column-at-a-time end_distribution and (``twin``) against the twin's turn_ends (turn_dp
    and end_distribution composed). Exact ties are broken alike only by the same
    arithmetic: the twin's values may differ in the last bits and take the other side."""
    stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val = inputs
    b = _kernel.turn_ends(rolls(_kernel, tab, hot), *inputs, True)
    a = _pure.turn_ends(rolls(_pure, tab, hot), *inputs, True) if twin else b
    start, dstart, V, R, RC = _kernel.turn_dp(rolls(_kernel, tab, hot), *inputs, True, True)
    sp, fp, bp, wp = _kernel.end_distribution(
        rolls(_kernel, tab, hot), stop_ok, stop_val, forced_ok, forced_val, V, R, RC
    )
    for name, x, y, z in zip(("start", "dstart", "ends", "bust_p", "win_p"), a, b, (start, dstart, sp + fp, bp, wp)):
        assert x.shape == y.shape == z.shape and y.dtype == np.float64, name
        scale = max(1.0, float(np.max(np.abs(x)))) if x.size else 1.0
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL * scale, err_msg=name)
        np.testing.assert_allclose(y, z, rtol=0, atol=TOL * scale, err_msg=name)
    np.testing.assert_allclose(b[2].sum(axis=0) + b[3] + b[4], 1.0, rtol=0, atol=1e-9)


@_fast(100)
@given(dp_cases())
def test_turn_ends_agrees(case):
    """Random rulesets and inputs, every hot-dice mode, K = 1..4."""
    tab, hot, inputs = _case(case)
    _compare_turn_ends(tab, hot, inputs)


@pytest.mark.parametrize("preset", ["farkle", "zilch", "plain"])
def test_turn_ends_over_several_blocks(preset):
    """K = 300 columns (three blocks of the compiled kernel, the last one short) on rulesets
    whose rolls offer a choice of options (Farkle, Zilch), against the twin; then integer
    stop values, which make exact ties between banking and rolling and between options,
    against the compiled column-at-a-time pass."""
    rs = load_ruleset(preset)
    tab = COMPILED.roll_table(rs)
    T, K = 45, 300
    rng = np.random.default_rng(11)
    stop_ok = (rng.random(T + 1) < 0.8).astype(np.uint8)
    smooth = np.arange(T + 1)[:, None] / 8 + 3 * rng.random((T + 1, K))
    forced_ok = np.zeros(T + 1, np.uint8)
    forced_ok[[7, 30]] = 1 - stop_ok[[7, 30]]
    rest = (forced_ok, rng.random((T + 1, K)), rng.normal(size=K), np.full(K, 9.0))
    _compare_turn_ends(tab, tab.hot_mode, (stop_ok, smooth, *rest))
    inputs = (stop_ok, np.floor(smooth), *rest)
    _compare_turn_ends(tab, tab.hot_mode, inputs, twin=False)
    # through the public wrapper
    tv, ends, bust_p, win_p = kernel.turn_ends(tab, *inputs, grad=True)
    ref = kernel.turn_dp(tab, *inputs, grad=True)
    np.testing.assert_array_equal(tv.start, ref.start)
    assert tv.V is None and ends.shape == (T + 1, K)


# --------------------------------------------------------------------------- duel level

from thousand.kernel import end_opponents  # noqa: E402
from thousand.solvers.duel import DuelModel  # noqa: E402

_PAIR = {"singles": {"1": 10, "5": 5}, "kinds": {"2": {"1": 25, "5": 15}}}
DUEL_RULES = {
    "overtaking-bolts": {"dice": 2, "goal": 30, "scoring": _PAIR, "overtake": 10, "bolts": {"limit": 2, "penalty": 10}},
    "barrel-push-off": {
        "dice": 2,
        "goal": 30,
        "keep": "any",
        "scoring": _PAIR,
        "barrel": {"kind": "points", "threshold": 20, "attempts": 2, "fall_penalty": 10, "push_off": "fall"},
    },
    "confirm": {"dice": 2, "goal": 30, "hot_dice": "confirm", "scoring": _PAIR, "overtake": 5},
    "free-any": {
        "dice": 2,
        "goal": 30,
        "hot_dice": "free",
        "keep": "any",
        "scoring": _PAIR,
        "overtake": 5,
        "bolts": {"limit": 2, "penalty": 5},
    },
    # equal_turns: seats double the states and first-seat wins read win_L (the last turn)
    "equal-turns": {
        "dice": 2,
        "goal": 30,
        "keep": "any",
        "scoring": _PAIR,
        "equal_turns": True,
        "overtake": 5,
        "barrel": {"kind": "points", "threshold": 20, "attempts": 2, "fall_penalty": 10, "push_off": "none"},
    },
}
_MODELS: dict = {}


def _model(name):
    if name not in _MODELS:
        rs = from_mapping(DUEL_RULES[name])
        _MODELS[name] = (DuelModel(rs), COMPILED.roll_table(rs))
    return _MODELS[name]


def _random_call(n, seed):
    """A random Q and random movers (repeats allowed) with random opponent ranges (some empty)."""
    rng = np.random.default_rng(seed)
    Q = rng.random((n, n))
    m = int(rng.integers(1, 2 * n))
    movers = rng.integers(0, n, size=m).astype(np.int64)
    a = rng.integers(0, n + 1, size=m)
    b = rng.integers(0, n + 1, size=m)
    return Q, movers, np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)


def _duel_both(model, tab, Q, movers, lo, hi, grad, threads=0):
    p = model.plans
    K = hi - lo
    ptr = np.zeros(len(K) + 1, np.int64)
    np.cumsum(K, out=ptr[1:])
    outs = []
    for impl in (_pure, _kernel):
        v = np.full(int(ptr[-1]), np.nan)
        d = np.full(int(ptr[-1]), np.nan) if grad else np.empty(0)
        impl.duel_level(rolls(impl, tab), plans(impl, p), Q, movers, lo, hi, v, d, ptr, grad, threads)
        outs.append((v, d))
    (v0, d0), (v1, d1) = outs
    np.testing.assert_allclose(v1, v0, rtol=0, atol=TOL)
    if grad:
        np.testing.assert_allclose(d1, d0, rtol=0, atol=TOL)
    return v1, d1


@_fast(40)
@given(st.sampled_from(sorted(DUEL_RULES)), st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([0, 1, 2]))
def test_duel_level_agrees(name, seed, grad, threads):
    """Random Q, random mover subsets (repeats allowed) and opponent ranges (some empty)."""
    model, tab = _model(name)
    Q, movers, lo, hi = _random_call(model.n, seed)
    _duel_both(model, tab, Q, movers, lo, hi, grad, threads)


@pytest.mark.parametrize("name", sorted(DUEL_RULES))
def test_duel_level_all_pairs(name):
    """Every mover against every opponent (the residual pass), through the public wrapper."""
    model, tab = _model(name)
    n = model.n
    Q = np.random.default_rng(1).random((n, n))
    movers = np.arange(n, dtype=np.int64)
    lo, hi = np.zeros(n, np.int64), np.full(n, n, np.int64)
    v, d = _duel_both(model, tab, Q, movers, lo, hi, True)
    w, e, ptr = kernel.duel_level(tab, model.plans, Q, movers, lo, hi, grad=True)
    np.testing.assert_array_equal(w, v)
    np.testing.assert_array_equal(e, d)
    assert ptr[-1] == n * n
    # the thread count does not change a number
    for threads in (1, 2):
        w1, e1, _ = kernel.duel_level(tab, model.plans, Q, movers, lo, hi, grad=True, threads=threads)
        np.testing.assert_array_equal(w1, w)
        np.testing.assert_array_equal(e1, e)


def _frames(model, px, py, width):
    """Frames of the pairs (px, py) as the duel solver builds them: by the model's frame
    ids, in order of the mover's score, ``width`` pairs at most, each frame over the rows
    of its lowest mover."""
    order = np.lexsort((model.score[px], model.frame[px]))
    fr = model.frame[px][order]
    cuts = [0]
    for k in range(1, len(order)):
        if fr[k] != fr[k - 1] or k - cuts[-1] == width:
            cuts.append(k)
    cp = np.array(cuts + [len(order)], dtype=np.int64)
    movers, opps = px[order], py[order]
    fm = movers[cp[:-1]]
    row0 = (model.score[movers] - np.repeat(model.score[fm], np.diff(cp))) // model.rs.unit
    return order, fm, cp, movers, opps, row0


def _random_frames(model, seed, width):
    """A random Q and random solved pairs (repeats allowed), laid out as frames."""
    n = model.n
    rng = np.random.default_rng(seed)
    Q = rng.random((n, n))
    _, lo, _ = model.opponents()
    k = int(rng.integers(1, 3 * n))
    px = rng.integers(0, n, size=k).astype(np.int64)
    py = lo[px] + rng.integers(0, model.players, size=k)
    return Q, k, _frames(model, px, py, width)


@_fast(30)
@given(
    st.sampled_from(sorted(DUEL_RULES)),
    st.integers(0, 2**32 - 1),
    st.integers(1, 40),
    st.booleans(),
    st.sampled_from([0, 1, 2]),
)
def test_duel_frames_agree(name, seed, width, grad, threads):
    """Random pairs run as frames (several movers in one turn DP, each from its own
    row): the compiled kernel, the pure twin, and each pair's own turn DP agree."""
    model, tab = _model(name)
    Q, k, (_, fm, cp, cm, co, row0) = _random_frames(model, seed, width)
    outs = []
    for impl in (_pure, _kernel):
        v, d = np.full(k, np.nan), np.full(k, np.nan) if grad else np.empty(0)
        impl.duel_frames(rolls(impl, tab), plans(impl, model.plans), Q, fm, cp, cm, co, row0, v, d, grad, threads)
        outs.append((v, d))
    one = np.ones(k, dtype=np.int64)
    w, e = _duel_both(model, tab, Q, cm, co, co + one, grad)
    for v, d in outs:
        np.testing.assert_allclose(v, w, rtol=0, atol=TOL)
        if grad:
            np.testing.assert_allclose(d, e, rtol=0, atol=TOL)


def test_duel_frames_refuse_unshifted_turns():
    """A column whose turn is not its frame's rows shifted (another horizon) is refused
    by both kernels; so is a frame layout that does not cover the columns."""
    model, tab = _model("overtaking-bolts")
    T = np.diff(model.plans.ptr) - 1
    a, b = int(np.argmax(T)), int(np.argmin(T))  # the longest and the shortest turn
    Q = np.full((model.n, model.n), 0.5)
    for impl in (_pure, _kernel):
        args = (rolls(impl, tab), plans(impl, model.plans), Q)
        with pytest.raises(ValueError):  # row 0 of a shorter turn: the horizons differ
            impl.duel_frames(
                *args,
                np.array([a]),
                np.array([0, 1]),
                np.array([b]),
                np.array([0]),
                np.array([0]),
                np.empty(1),
                np.empty(1),
                True,
                0,
            )
        with pytest.raises(ValueError):  # col_ptr does not end at the number of columns
            impl.duel_frames(
                *args,
                np.array([a]),
                np.array([0, 2]),
                np.array([a]),
                np.array([0]),
                np.array([0]),
                np.empty(1),
                np.empty(1),
                True,
                0,
            )


def test_duel_level_rejects_bad_inputs():
    model, tab = _model("overtaking-bolts")
    p = model.plans
    n = model.n
    args = (tab.rolls, plans(_kernel, p))
    movers = np.array([0], np.int64)
    ptr = np.array([0, n], np.int64)
    with pytest.raises(ValueError):  # Q not square
        _kernel.duel_level(
            *args, np.zeros((n, n + 1)), movers, np.array([0]), np.array([n]), np.zeros(n), np.zeros(n), ptr, True, 0
        )
    with pytest.raises(ValueError):  # opponent range past n
        _kernel.duel_level(
            *args,
            np.zeros((n, n)),
            movers,
            np.array([0]),
            np.array([n + 1]),
            np.zeros(n + 1),
            np.zeros(n + 1),
            np.array([0, n + 1]),
            True,
            0,
        )
    with pytest.raises(ValueError):  # a win column past win_L
        _kernel.duel_level(
            tab.rolls,
            plans(_kernel, p, win_col=np.full(len(p.next), 1), win_L=np.zeros((n, 1))),
            np.zeros((n, n)),
            movers,
            np.array([0]),
            np.array([n]),
            np.zeros(n),
            np.zeros(n),
            ptr,
            True,
            0,
        )
    with pytest.raises(ValueError):  # win_L without win_col
        _kernel.duel_level(
            tab.rolls,
            plans(_kernel, p, win_L=np.zeros((n, 1))),
            np.zeros((n, n)),
            movers,
            np.array([0]),
            np.array([n]),
            np.zeros(n),
            np.zeros(n),
            ptr,
            True,
            0,
        )
    with pytest.raises(ValueError):  # out_v too short
        _kernel.duel_level(
            *args, np.zeros((n, n)), movers, np.array([0]), np.array([n]), np.zeros(n - 1), np.zeros(n), ptr, True, 0
        )


# --------------------------------------------------------------------------- duel policy rows


def _policy_both(model, tab, Q, movers, lo, hi, threads=0):
    """duel_policy from both kernels: the same values, constants and sparse rows."""
    from scipy import sparse

    n = model.n
    out = []
    for b in (PURE, COMPILED):
        r = kernel.duel_policy(b.roll_table(model.rs), model.plans, Q, movers, lo, hi, threads=threads)
        assert r.cols.dtype == np.int32 and r.vals.dtype == np.float64
        assert np.all((r.cols >= 0) & (r.cols < n * n))
        M = sparse.csr_matrix((r.vals, r.cols, r.indptr), shape=(len(r.v), n * n))
        out.append((r, M))
    (a, Ma), (b, Mb) = out
    np.testing.assert_allclose(b.v, a.v, rtol=0, atol=TOL)
    np.testing.assert_allclose(b.c, a.c, rtol=0, atol=TOL)
    if Ma.nnz or Mb.nnz:
        assert abs(Ma - Mb).max() <= TOL
    return b, Mb


@_fast(40)
@given(st.sampled_from(sorted(DUEL_RULES)), st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2]))
def test_duel_policy_agrees(name, seed, threads):
    """Random Q, random mover subsets and opponent ranges: the policy rows of the two
    kernels agree, reproduce the turn's value at Q (v = c - M q, the DP's decisions held
    fixed), conserve probability (every end is worth 1 - Q or a win worth 1, so c = 1)
    and carry the DP values of duel_level. With equal_turns a first-seat win is worth
    1 - L <= 1, so there c <= 1."""
    model, tab = _model(name)
    Q, movers, lo, hi = _random_call(model.n, seed)
    r, M = _policy_both(model, tab, Q, movers, lo, hi, threads)
    np.testing.assert_allclose(r.c - M @ Q.ravel(), r.v, rtol=0, atol=TOL)
    if model.plans.win_col is None:
        np.testing.assert_allclose(r.c, 1.0, rtol=0, atol=TOL)
    else:
        assert np.all((r.c >= -TOL) & (r.c <= 1.0 + TOL))
    v, _, _ = kernel.duel_level(tab, model.plans, Q, movers, lo, hi, grad=False)
    np.testing.assert_allclose(r.v, v, rtol=0, atol=TOL)


@_fast(30)
@given(st.sampled_from(sorted(DUEL_RULES)), st.integers(0, 2**32 - 1), st.integers(1, 40), st.sampled_from([0, 1, 2]))
def test_duel_policy_frames_agree(name, seed, width, threads):
    """Random pairs as frames: the policy rows of both kernels agree with each other
    and with each pair's own duel_policy row (values, constants, every entry)."""
    from scipy import sparse

    model, tab = _model(name)
    n = model.n
    Q, k, (_, fm, cp, cm, co, row0) = _random_frames(model, seed, width)
    one = np.ones(k, dtype=np.int64)
    want, Mw = _policy_both(model, tab, Q, cm, co, co + one, threads)
    for b in (PURE, COMPILED):
        r = kernel.duel_policy(
            b.roll_table(model.rs), model.plans, Q, fm, None, None, threads=threads, frames=(cp, cm, co, row0)
        )
        M = sparse.csr_matrix((r.vals, r.cols, r.indptr), shape=(k, n * n))
        np.testing.assert_allclose(r.v, want.v, rtol=0, atol=TOL)
        np.testing.assert_allclose(r.c, want.c, rtol=0, atol=TOL)
        if M.nnz or Mw.nnz:
            assert abs(M - Mw).max() <= TOL


@pytest.mark.parametrize("name", sorted(DUEL_RULES))
def test_duel_policy_rows_are_the_end_distribution(name):
    """Each row holds the turn's end distribution (kernel.end_distribution of the same
    solved turn), summed per successor pair: checked for every pair at a random Q."""
    model, tab = _model(name)
    n, p = model.n, model.plans
    Q = np.random.default_rng(7).random((n, n))
    movers = np.arange(n, dtype=np.int64)
    r, M = _policy_both(model, tab, Q, movers, np.zeros(n, np.int64), np.full(n, n, np.int64))
    for i in range(n):
        stop_ok, forced_ok, nxt, opp, ends, bust = _pure._mover_ends(plans(_pure, p), Q, i, 0, n)
        tv = kernel.turn_dp(tab, stop_ok, ends, forced_ok, ends, bust, 1.0, full=True)
        sp, fp, bp, wp = kernel.end_distribution(tab, stop_ok, ends, forced_ok, ends, tv)
        for k in range(n):
            want = np.zeros(n * n)
            for t in range(1, len(stop_ok)):
                if nxt[t] >= 0:
                    want[nxt[t] * n + opp[t, k]] += sp[t, k] + fp[t, k]
            want[p.bust[i] * n + k] += bp[k]
            row = M[i * n + k].toarray().ravel()
            np.testing.assert_allclose(row, want, rtol=0, atol=TOL)


def test_duel_level_reads_the_last_turn():
    """A first-seat win row is worth 1 - win_L[y, col]: changing win_L changes exactly
    the movers that can win, in both kernels."""
    import dataclasses
    import types

    model, tab = _model("equal-turns")
    p = model.plans
    n, m = model.n, model.players
    Q = np.random.default_rng(2).random((n, n))
    movers, lo, hi = model.opponents()
    v, _ = _duel_both(model, tab, Q, movers, lo, hi, False)
    final = types.SimpleNamespace(plans=dataclasses.replace(p, win_L=np.zeros_like(p.win_L)))
    v0, _ = _duel_both(final, tab, Q, movers, lo, hi, False)
    moved = np.abs(v - v0).reshape(n, m).max(axis=1) > 1e-12
    can_win = np.array(
        [np.any((p.next[p.ptr[i] : p.ptr[i + 1]] == -1) & (p.win_col[p.ptr[i] : p.ptr[i + 1]] >= 0)) for i in range(n)]
    )
    assert moved.any() and not moved[m:].any()
    assert np.all(moved <= can_win)
    assert np.all(v <= v0 + 1e-15)  # the opponent's last turn can only cost the first seat


# --------------------------------------------------------------------------- sparse rows


@_fast(40)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(1, 50), st.sampled_from([0, 1, 2]), st.booleans())
def test_rows_minus_agrees(seed, rows, width, threads, single):
    """c - A x for random CSR rows (some empty), values float64 or float32 (a policy's
    approximate rows): both kernels, and a dense float64 product."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 8, size=rows)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cols = rng.integers(0, width, size=int(indptr[-1])).astype(np.int32)
    vals = rng.random(int(indptr[-1])).astype(np.float32 if single else np.float64)
    x, c = rng.random(width), rng.random(rows)
    dense = np.zeros((rows, width))
    np.add.at(dense, (np.repeat(np.arange(rows), counts), cols), vals.astype(np.float64))
    a = PURE.rows_minus(indptr, cols, vals, x, c, threads)
    b = COMPILED.rows_minus(indptr, cols, vals, x, c, threads)
    np.testing.assert_allclose(a, c - dense @ x, rtol=0, atol=TOL)
    np.testing.assert_allclose(b, a, rtol=0, atol=TOL)


def test_rows_minus_rejects_bad_rows():
    x, c = np.zeros(3), np.zeros(2)
    with pytest.raises(ValueError):
        _kernel.rows_minus(np.array([0, 2, 1]), np.zeros(2, np.int32), np.zeros(2), x, c, np.empty(2), 1)
    with pytest.raises(ValueError):
        _kernel.rows_minus(np.array([0, 1, 2]), np.array([0, 3], np.int32), np.zeros(2), x, c, np.empty(2), 1)


@_fast(40)
@given(st.integers(0, 2**32 - 1), st.integers(0, 200), st.floats(0.0, 1.0))
def test_solve_links_agrees(seed, rows, none_share):
    """x + a x[succ] = b on a random functional graph (cycles of every length, self
    loops, trees hanging off them, rows without successor): both kernels, each
    checked against the equations themselves and a dense solve."""
    rng = np.random.default_rng(seed)
    succ = rng.integers(0, max(rows, 1), size=rows).astype(np.int64)
    succ[rng.random(rows) < none_share] = -1
    a, b = rng.random(rows) * 0.99, rng.random(rows)
    dense = np.eye(rows)
    r = np.flatnonzero(succ >= 0)
    np.add.at(dense, (r, succ[r]), a[r])
    want = np.linalg.solve(dense, b) if rows else np.zeros(0)
    for backend in (PURE, COMPILED):
        x = backend.solve_links(succ, a, b)
        resid = x + np.where(succ >= 0, a * x[np.maximum(succ, 0)], 0.0) - b if rows else x
        assert np.max(np.abs(resid), initial=0.0) < 1e-12
        np.testing.assert_allclose(x, want, rtol=0, atol=1e-10)


def _random_levels(rng, size: int, nlev: int, single: bool):
    """Random levels over x of ``size`` entries: disjoint rows, CSR rows into all of x,
    links inside each level (a < 1/2 keeps every cycle regular)."""
    perm = rng.permutation(size)
    cuts = np.sort(rng.integers(0, size + 1, size=nlev - 1)) if nlev > 1 else np.zeros(0, np.int64)
    levels = []
    for rows in np.split(perm, cuts):
        m = len(rows)
        counts = rng.integers(0, 6, size=m)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        cols = rng.integers(0, size, size=int(indptr[-1])).astype(np.int32)
        vals = (rng.random(int(indptr[-1])) * 0.1).astype(np.float32 if single else np.float64)
        succ = rng.integers(-1, max(m, 1), size=m).astype(np.int64) if m else np.zeros(0, np.int64)
        levels.append((rows.astype(np.int64), rng.random(m), indptr, cols, vals, succ, rng.random(m) * 0.5))
    return levels


@_fast(40)
@given(st.integers(0, 2**32 - 1), st.integers(0, 200), st.integers(1, 6), st.sampled_from([0, 1, 2]), st.booleans())
def test_level_sweep_agrees(seed, size, nlev, threads, single):
    """A Gauss-Seidel sweep over random levels, twice from random x: both kernels, and
    the sweep done by hand, level after level, with a dense product and a dense solve
    of each level's links (the levels read the values the levels before them wrote)."""
    rng = np.random.default_rng(seed)
    levels = _random_levels(rng, size, nlev, single)
    x0 = rng.random(size)
    want = x0.copy()
    for _ in range(2):
        for rows, rho, indptr, cols, vals, succ, a in levels:
            m = len(rows)
            off = np.zeros((m, size))  # the rows' entries outside the level's own links
            np.add.at(off, (np.repeat(np.arange(m), np.diff(indptr)), cols), vals.astype(np.float64))
            D = np.eye(m)
            r = np.flatnonzero(succ >= 0)
            np.add.at(D, (r, succ[r]), a[r])
            want[rows] = np.linalg.solve(D, rho - off @ want) if m else want[rows]
    _twice_agree([b.level_sweep(levels, size) for b in (PURE, COMPILED)], x0, threads, want)


def _twice_agree(sweeps, x0, threads, want):
    """Two sweeps from x0 by each kernel's sweeper (pure first): the first's change is the
    largest move, the pure result equals ``want``, the compiled one the pure one."""
    got = []
    for sweep in sweeps:
        x = x0.copy()
        change = sweep.sweep(x, threads)
        assert change == pytest.approx(float(np.max(np.abs(x - x0), initial=0.0)), abs=1e-15)
        sweep.sweep(x, threads)
        got.append(x)
    np.testing.assert_allclose(got[0], want, rtol=0, atol=1e-10)
    np.testing.assert_allclose(got[1], got[0], rtol=0, atol=TOL)


def test_level_sweep_refuses_bad_input():
    """Rows outside x, columns outside x, a succ outside the level, an x of the wrong size
    and a singular cycle: a clear error from both kernels."""
    ok = (
        np.array([0, 1]),
        np.ones(2),
        np.array([0, 1, 1]),
        np.array([2], np.int32),
        np.ones(1),
        np.array([1, -1]),
        np.full(2, 0.5),
    )
    for backend in (PURE, COMPILED):
        with pytest.raises(ValueError):
            backend.level_sweep([(np.array([0, 3]), *ok[1:])], 3)
        with pytest.raises(ValueError):
            backend.level_sweep([(*ok[:5], np.array([2, -1]), ok[6])], 3)
        with pytest.raises(ValueError):
            backend.level_sweep([ok], 3).sweep(np.zeros(4))
        with pytest.raises(ValueError):
            backend.level_sweep([(*ok[:3], np.array([5], np.int32), *ok[4:])], 3).sweep(np.zeros(3))
        with pytest.raises(ZeroDivisionError):
            backend.level_sweep([(*ok[:5], np.array([1, 0]), np.ones(2))], 3).sweep(np.zeros(3))


def _random_patterns(rng, p, n: int, size: int):
    """Two random stores of patterns over the plans ``p`` (ends that go on, of the
    pattern's own mover; their chances and the bust's below 1/2 in all) reading the two
    halves of x, and random levels of pattern rows (links: the bust, to a row of the level).
    With equal turns (``p.win_col``) the ends include first-seat wins, worth a random
    ``won`` per store."""
    seated = p.win_col is not None
    rows = [np.arange(p.ptr[i], p.ptr[i + 1]) for i in range(n)]
    go_on = [r[(p.next[r] >= 0) | (seated and (p.next[r] == -1) & (p.win_col[r] >= 0))] for r in rows]
    stores = []
    for base in (n * n, 0):
        P = int(rng.integers(1, 12))
        mover = rng.integers(0, n, size=P)
        ends = [rng.choice(go_on[i], size=int(rng.integers(0, len(go_on[i]) + 1)), replace=False) for i in mover]
        ptr = np.concatenate([[0], np.cumsum([len(e) for e in ends])])
        prob = rng.random(int(ptr[-1])) * 0.5 / max(1, max(len(e) for e in ends))
        store = (ptr, np.concatenate(ends), prob, rng.random(P) * 0.4, rng.random(P), mover, base)
        stores.append(store + ((rng.random(p.win_L.shape),) if seated else ()))
    total = sum(len(s[3]) for s in stores)
    levels = []
    perm = rng.permutation(size)
    cuts = np.sort(rng.integers(0, size + 1, size=int(rng.integers(0, 4))))
    for rows in np.split(perm, cuts):
        m = len(rows)
        succ = rng.integers(-1, max(m, 1), size=m) if m else np.zeros(0, np.int64)
        levels.append((rows, rng.integers(0, total, size=m), rng.integers(0, n, size=m), succ))
    return stores, levels


@_fast(30)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["overtaking-bolts", "barrel-push-off", "free-any", "equal-turns"]),
    st.sampled_from([0, 1, 2]),
)
def test_pattern_sweep_agrees(seed, name, threads):
    """Random patterns over a duel's plans with overtaking and push-off (and first-seat
    wins worth ``won``), swept twice from random x: both kernels, and the sweep done by
    hand -- each row's entries spelled out (the opponent after each end by
    end_opponents), each level solved densely with its links."""
    model, _ = _model(name)
    p, n = model.plans, model.n
    size = 2 * n * n
    rng = np.random.default_rng(seed)
    stores, levels = _random_patterns(rng, p, n, size)
    first = np.cumsum([0] + [len(s[3]) for s in stores])
    x0 = rng.random(size)
    want = x0.copy()
    for _ in range(2):
        for rows, pat, opp, succ in levels:
            m = len(rows)
            A, rhs = np.eye(m), np.zeros(m)
            for k in range(m):
                s = int(np.searchsorted(first, pat[k], side="right")) - 1
                ptr, ends, prob, bust_p, cst, mover, base, *won = stores[s]
                q, j = pat[k] - first[s], opp[k]
                i = mover[q]
                g = ends[ptr[q] : ptr[q + 1]]
                y = end_opponents(p, i, g, np.array([j]))[:, 0] if len(g) else np.zeros(0, np.int64)
                worth = want[base + p.next[g] * n + y]
                if won:  # a first-seat win reads no x: the last turn's worth against j
                    worth = np.where(p.next[g] == -1, won[0][j, p.win_col[g]], worth)
                rhs[k] = cst[q] + prob[ptr[q] : ptr[q + 1]] @ worth
                if succ[k] >= 0:
                    A[k, succ[k]] -= bust_p[q]
                else:
                    rhs[k] += bust_p[q] * want[base + p.bust[i] * n + j]
            want[rows] = np.linalg.solve(A, rhs) if m else want[rows]
    _twice_agree([b.pattern_sweep(p, stores, levels, size) for b in (PURE, COMPILED)], x0, threads, want)


def test_pattern_sweep_refuses_bad_input():
    """An end of another mover or one that wins, a pattern, opponent, row or link outside
    its range, a block of pairs outside x, an x of the wrong size, a singular link cycle:
    a clear error from both kernels."""
    model, _ = _model("overtaking-bolts")
    p, n = model.plans, model.n
    size = 2 * n * n
    i = int(np.flatnonzero(np.diff(p.ptr) > 2)[0])
    rows_i = np.arange(p.ptr[i], p.ptr[i + 1])
    go, win = rows_i[p.next[rows_i] >= 0][:1], rows_i[p.next[rows_i] < 0][:1]
    other = np.array([p.ptr[i + 1]]) if i + 1 < n else np.array([p.ptr[i - 1]])

    def store(ends=go, base=0, bust=0.25):
        return (np.array([0, len(ends)]), ends, np.full(len(ends), 0.25), np.array([bust]), np.zeros(1), [i], base)

    level = (np.array([0, 1]), np.array([0, 0]), np.array([0, 1]), np.array([-1, -1]))
    for backend in (PURE, COMPILED):
        assert backend.pattern_sweep(p, [store()], [level], size).sweep(np.zeros(size)) == 0.0
        for bad_store in (store(other), store(win), store(base=n * n + 1)):
            with pytest.raises(ValueError):
                backend.pattern_sweep(p, [bad_store], [level], size)
        for k, bad in ((0, np.array([0, size])), (1, np.array([0, 1])), (2, np.array([0, n])), (3, np.array([2, -1]))):
            lv = list(level)
            lv[k] = bad
            with pytest.raises(ValueError):
                backend.pattern_sweep(p, [store()], [tuple(lv)], size)
        with pytest.raises(ValueError):
            backend.pattern_sweep(p, [store()], [level], size).sweep(np.zeros(size + 1))
        loop = (np.array([0, 1]), np.array([0, 0]), np.array([0, 0]), np.array([1, 0]))
        with pytest.raises(ZeroDivisionError):
            backend.pattern_sweep(p, [store(bust=1.0)], [loop], size).sweep(np.zeros(size))


def test_pattern_sweep_refuses_bad_wins():
    """Equal turns: a first-seat win is read from ``won`` (and counted once, without x),
    a final win (a second seat's), a win without ``won`` and a ``won`` of the wrong
    shape are refused by both kernels."""
    model, _ = _model("equal-turns")
    p, n = model.plans, model.n
    size = 2 * n * n
    r = np.arange(len(p.next))
    first = r[(p.next == -1) & (p.win_col >= 0)][:1]
    final = r[(p.next == -1) & (p.win_col < 0)][:1]
    i, f = (int(np.searchsorted(p.ptr, g[0], side="right")) - 1 for g in (first, final))
    won = np.linspace(0.0, 1.0, p.win_L.size).reshape(p.win_L.shape)

    def store(ends, mover, w=won):
        return (np.array([0, 1]), ends, np.full(1, 0.5), np.zeros(1), np.zeros(1), [mover], 0, w)

    j = 3
    level = (np.array([j * n + i]), np.array([0]), np.array([j]), np.array([-1]))
    for backend in (PURE, COMPILED):
        x = np.zeros(size)
        backend.pattern_sweep(p, [store(first, i)], [level], size).sweep(x)
        assert x[j * n + i] == 0.5 * won[j, p.win_col[first[0]]]
        for bad in (store(final, f), store(first, i, None)[:7], store(first, i, won[:, :-1])):
            with pytest.raises(ValueError):
                backend.pattern_sweep(p, [bad], [level], size)


def test_solve_links_refuses_bad_input():
    for backend in (PURE, COMPILED):
        with pytest.raises(ValueError):
            backend.solve_links(np.array([0, 5]), np.zeros(2), np.zeros(2))
        with pytest.raises(ZeroDivisionError):  # x0 + x1 = 1, x1 + x0 = 1: no unique solution
            backend.solve_links(np.array([1, 0]), np.array([1.0, 1.0]), np.ones(2))


@_fast(40)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 60),
    st.booleans(),
    st.sampled_from([0.0, 0.3]),
    st.booleans(),
    st.booleans(),
)
def test_rows_split_agrees(seed, rows, split, drop, links, threaded):
    """Rows in capacity slots (with gaps) compacted and split by a local index: both
    kernels alike, and every entry lands once, in its row, on the side local says;
    with ``drop`` the entries below it are left out and the outer values are float32;
    with ``links`` only a row's largest local entry (the first of equals) goes inside;
    ``threaded``: the compiled kernel splits even these few rows on two threads."""
    rng = np.random.default_rng(seed)
    width = 40
    cap = np.concatenate([[0], np.cumsum(rng.integers(0, 6, size=rows))]).astype(np.int64)
    cnt = np.array([rng.integers(0, cap[p + 1] - cap[p] + 1) for p in range(rows)], dtype=np.int64)
    cols = rng.integers(0, width, size=int(cap[-1])).astype(np.int64)
    vals = rng.random(int(cap[-1]))
    vals[rng.random(len(vals)) < 0.4] = 0.9  # equal values, often a row's largest: the first of them counts
    local = np.where(rng.random(width) < 0.3, rng.integers(0, 10, size=width), -1) if split else None
    a = _pure.rows_split(cap, cnt, cols, vals, local, drop, links)
    serial = _kernel._SPLIT_SERIAL_ROWS
    try:
        _kernel._SPLIT_SERIAL_ROWS = 0 if threaded else serial
        b = _kernel.rows_split(cap, cnt, cols, vals, local, drop, links, 2 if threaded else 1)
    finally:
        _kernel._SPLIT_SERIAL_ROWS = serial
    for x, y in zip(a, b):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)
    indptr, oc, ov, ir, il, iv = b
    kept = sum(int(np.sum(vals[cap[p] : cap[p] + cnt[p]] >= drop)) for p in range(rows))
    assert oc.dtype == np.int32 and indptr[-1] == len(oc) and len(oc) + len(iv) == kept
    assert ov.dtype == (np.float32 if drop else np.float64)
    want_in = []
    for p in range(rows):
        row = [
            (e, int(c), float(v))
            for e, (c, v) in enumerate(zip(cols[cap[p] : cap[p] + cnt[p]], vals[cap[p] : cap[p] + cnt[p]]))
            if v >= drop
        ]
        inside = [(e, c, v) for e, c, v in row if local is not None and local[c] >= 0]
        if links and inside:
            top = max(v for _, _, v in inside)
            inside = [next((e, c, v) for e, c, v in inside if v == top)]
        want_in += [(p, int(local[c]), v) for _, c, v in inside]
        got = sorted(zip(oc[indptr[p] : indptr[p + 1]].tolist(), ov[indptr[p] : indptr[p + 1]].tolist()))
        want = [(c, float(ov.dtype.type(v))) for e, c, v in row if (e, c, v) not in inside]
        assert got == sorted(want)
    if links:
        assert len(set(ir.tolist())) == len(ir)
    assert sorted(zip(ir.tolist(), il.tolist(), iv.tolist())) == sorted(want_in)
