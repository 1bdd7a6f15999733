"""The compiled kernel (``solver._kernel``) and its pure twin (``solver._pure``) agree.

Roll classes must be identical array for array on random rulesets; the turn DP
must agree to 1e-12 (start, dstart and the full tables V, R, RC) on random
inputs in every hot-dice mode. Skipped when the extension is not built.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

_kernel = pytest.importorskip("solver._kernel")

from solver import _pure, kernel  # noqa: E402
from solver.rules import from_mapping, load_ruleset  # noqa: E402
from solver.scoring import scoring_groups  # noqa: E402

TOL = 1e-12

def _fast(n: int):
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

POINTS = st.sampled_from([5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 250, 500])


@st.composite
def rulesets(draw, max_dice: int = 6):
    """A random small ruleset on six-faced dice (as a TOML-like mapping, validated)."""
    dice = draw(st.integers(1, max_dice))
    faces = 6
    singles = {str(f): draw(POINTS) for f in sorted(draw(st.sets(st.integers(1, faces), min_size=1,
                                                                  max_size=3)))}
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
            patterns.append({"size": size, "count": count, "distinct": draw(st.booleans()),
                             "points": draw(POINTS)})
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
        "scoring": {"singles": singles, "kinds": kinds, "straights": straights,
                    "patterns": patterns, "instant_win": instant},
    }
    return from_mapping(mapping)


def _assert_same_classes(rs, n):
    g = scoring_groups(rs)
    args = (g.counts, g.points, g.instant, n, rs.faces, rs.keep == "any", rs.unit)
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
    rc = kernel.roll_classes(load_ruleset("plain"), 5, pure=False)
    assert rc.rolls.shape == (252, 6)
    assert int(rc.weight.sum()) == 6 ** 5
    assert len(rc) == len(kernel.roll_classes(load_ruleset("plain"), 5, pure=True))


# --------------------------------------------------------------------------- turn DP


def _bust_everywhere(tab) -> bool:
    """Every dice count can bust: then the hot-dice cycle ends with probability 1."""
    for n in range(1, tab.dice + 1):
        lo, hi = tab.cls_ptr[n], tab.cls_ptr[n + 1]
        cnt = tab.opt_ptr[lo + 1:hi + 1] - tab.opt_ptr[lo:hi]
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
    args = (tab.cls_ptr, tab.cls_prob, tab.cls_instant, tab.opt_ptr, tab.opt_points,
            tab.opt_used, tab.dice, hot, *inputs, grad, full)
    a = _pure.turn_dp(*args)
    b = _kernel.turn_dp(*args)
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
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return rs, T, K, hot, p_stop, p_forced, tail_stop, tail_forced, seed


@_fast(100)
@given(dp_cases())
def test_turn_dp_agrees(case):
    rs, T, K, hot, p_stop, p_forced, tail_stop, tail_forced, seed = case
    tab = kernel.roll_table(rs, pure=False)
    assume(_bust_everywhere(tab))
    rng = np.random.default_rng(seed)
    inputs = _inputs(rng, T, K, p_stop, p_forced, tail_stop, tail_forced)
    _compare(tab, hot, inputs, grad=True, full=True)
    # without the full tables (ring storage when T is long) and without the gradient
    _compare(tab, hot, inputs, grad=True, full=False)
    _compare(tab, hot, inputs, grad=False, full=False)


@_fast(40)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([0, 1, 2]), st.integers(1, 4),
       st.integers(0, 80), st.booleans(), st.booleans())
def test_turn_dp_long_turns_pig(seed, hot, K, T, tail_stop, tail_forced):
    """Pig adds at most 6 per roll, so long turns use the ring storage."""
    tab = kernel.roll_table(load_ruleset("pig"), pure=False)
    rng = np.random.default_rng(seed)
    inputs = _inputs(rng, T, K, 0.6, 0.1, tail_stop, tail_forced)
    a, b = _compare(tab, hot, inputs, grad=True, full=False)
    full = _kernel.turn_dp(tab.cls_ptr, tab.cls_prob, tab.cls_instant, tab.opt_ptr,
                           tab.opt_points, tab.opt_used, tab.dice, hot, *inputs, True, True)
    # ring storage and full tables give the very same numbers
    np.testing.assert_array_equal(full[0], b[0])
    np.testing.assert_array_equal(full[1], b[1])


@pytest.mark.parametrize("K", [40, 150])
@pytest.mark.parametrize("hot", [0, 1, 2])
def test_turn_dp_long_turns_wide(hot, K):
    """Long turns with many columns: ring storage and wide blocks."""
    tab = kernel.roll_table(load_ruleset("pig"), pure=False)
    rng = np.random.default_rng(K + hot)
    for tail_forced in (False, True):
        _compare(tab, hot, _inputs(rng, 90, K, 0.6, 0.1, True, tail_forced), grad=True,
                 full=False)
        _compare(tab, hot, _inputs(rng, 90, K, 0.6, 0.1, False, tail_forced), grad=False,
                 full=False)


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
    for pure in (True, False):
        res.append(kernel.turn_dp(kernel.roll_table(rs, pure=pure), stop_ok, stop_val, forced_ok,
                                  forced_val, bust_val, win_val, grad=True, full=True, pure=pure))
    for name in ("start", "dstart", "V", "R", "RC"):
        x, y = getattr(res[0], name), getattr(res[1], name)
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL * max(1.0, np.abs(x).max()), err_msg=name)


def test_turn_dp_columns_independent():
    """A column's result does not depend on the other columns or on the block it falls in."""
    tab = kernel.roll_table(load_ruleset("plain"), pure=False)
    T, K = 40, 150
    rng = np.random.default_rng(7)
    inputs = _inputs(rng, T, K, 0.7, 0.1, True, False)
    args = (tab.cls_ptr, tab.cls_prob, tab.cls_instant, tab.opt_ptr, tab.opt_points,
            tab.opt_used, tab.dice, tab.hot_mode)
    whole = _kernel.turn_dp(*args, *inputs, True, False)
    stop_ok, stop_val, forced_ok, forced_val, bust_val, win_val = inputs
    for k in (0, 63, 64, 149):
        one = _kernel.turn_dp(*args, stop_ok, stop_val[:, k:k + 1], forced_ok, forced_val[:, k:k + 1],
                              bust_val[k:k + 1], win_val[k:k + 1], True, False)
        np.testing.assert_allclose(one[0], whole[0][k:k + 1], rtol=0, atol=1e-13)
        np.testing.assert_allclose(one[1], whole[1][k:k + 1], rtol=0, atol=1e-13)


def test_turn_dp_rejects_bad_shapes():
    tab = kernel.roll_table(load_ruleset("pig"), pure=False)
    args = (tab.cls_ptr, tab.cls_prob, tab.cls_instant, tab.opt_ptr, tab.opt_points,
            tab.opt_used, tab.dice, tab.hot_mode)
    ok = np.ones(5, np.uint8)
    with pytest.raises(ValueError):
        _kernel.turn_dp(*args, ok, np.zeros((5, 2)), ok, np.zeros((5, 2)), np.zeros(3),
                        np.zeros(3), False, False)
