"""The duel solved out of core (thousand.solvers.store): the same values as in memory, in parts
within the memory budget, and the kernel reading a transposed store in place."""

from __future__ import annotations

import json
import mmap

import numpy as np
import pytest
from tiny import TINY_DUELS, TINY_EQUAL_TURNS

from thousand import kernel
from thousand.base.errors import ThousandError
from thousand.rules import from_mapping, load_ruleset
from thousand.solvers import store
from thousand.solvers.duel import DuelModel, _levels, _turns, solve_duel
from thousand.solvers.store import ValueStore

TINY = {**TINY_DUELS, **TINY_EQUAL_TURNS}


def solved_pairs_differ(model, A, B) -> float:
    movers, lo, hi = model.opponents()
    return max(float(np.max(np.abs(A[j, lo[j] : hi[j]] - B[j, lo[j] : hi[j]]))) for j in movers)


@pytest.mark.parametrize("name", sorted(TINY))
def test_out_of_core_passes_give_the_in_memory_values(name, tmp_path):
    """Every tiny duel (penalties, barrels, equal turns) solved with its values in a
    memory-mapped file, read and written a few rows at a time, equals the solve in
    memory; the file reads back as a plain .npy array."""
    rs = from_mapping(TINY[name])
    model = DuelModel(rs)
    in_memory = solve_duel(rs, method="passes", model=model)
    # page-sized windows and a budget of a few rows: many parts on a tiny game
    st = ValueStore(tmp_path / "values.npy", model.n, 8 * 2 * mmap.PAGESIZE, window=mmap.PAGESIZE)
    parts = []
    release = st.release
    st.release = lambda: (parts.append(1), release())
    out = solve_duel(rs, model=model, store=st)
    assert out.rounds == 0 and out.residual <= 1e-12
    assert solved_pairs_differ(model, in_memory.P, out.P) <= 1e-12
    assert len(parts) > 4 * out.passes  # it did run in parts, several per pass
    st.close()
    back = np.load(tmp_path / "values.npy", mmap_mode="r")
    assert solved_pairs_differ(model, in_memory.P, back) <= 1e-12


@pytest.mark.slow
def test_the_store_stays_within_its_budget(tmp_path):
    """Pig to 300 (300 states, a 720,000-byte table) with a 512 KiB budget: this process
    never had more than the budget of the store mapped, and the values are the ones
    solved in memory."""
    rs = load_ruleset("pig", ["goal=300"])
    model = DuelModel(rs)
    budget = 512 * 1024
    st = ValueStore(tmp_path / "pig.npy", model.n, budget, measure=True)
    assert st.table_bytes > budget
    out = solve_duel(rs, model=model, store=st)
    assert 0 < st.peak_resident <= budget
    in_memory = solve_duel(rs, model=model)
    assert np.max(np.abs(in_memory.P - out.P)) <= 1e-12


def test_a_budget_below_one_opponents_rows_is_refused(tmp_path):
    with pytest.raises(ThousandError, match="needs a memory budget of at least"):
        ValueStore(tmp_path / "v.npy", 300, 100 * 1024)
    rs = from_mapping(TINY["pig-10"])
    st = ValueStore(tmp_path / "w.npy", 7, 1 << 20)
    with pytest.raises(ThousandError, match="value store of 7 states"):
        solve_duel(rs, store=st)
    with pytest.raises(ThousandError, match="textbook method runs in memory"):
        solve_duel(rs, store=st, method="textbook")


def test_window_parts_hold_at_most_the_limit():
    """Each part's keys touch at most ``limit`` windows together, and every key is in one part."""
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 40, 200)
    lo = np.sort(rng.integers(0, 60, (40, 3)), axis=1)
    hi = lo + rng.integers(0, 2, (40, 3))
    parts = store._window_parts(keys, lo, hi, 6)
    assert sorted(np.concatenate(parts).tolist()) == list(range(200))
    for p in parts:
        u = np.unique(keys[p])
        windows = {w for k in u for a, b in zip(lo[k], hi[k]) for w in range(a, b + 1)}
        assert len(windows) <= 6 or len(u) == 1


@pytest.mark.parametrize("name", ["barrel-push-off", "overtaking-bolts", "equal-barrel"])
def test_the_kernel_reads_a_transposed_store_in_place(name):
    """The turn DPs of every level (frames, the bust derivative, push-off and overtaking)
    and a whole Jacobi pass give the same numbers from Q and from P.T (Q's transpose
    laid out as P), so the store is read where it lies."""
    rs = from_mapping(TINY[name])
    model = DuelModel(rs)
    Q = np.random.default_rng(5).random((model.n, model.n))
    P = np.ascontiguousarray(Q.T)
    assert P.T.flags.f_contiguous and not P.T.flags.c_contiguous
    for lv in _levels(model):
        a = _turns(model, model.table, Q, lv.px, lv.py, 0)
        b = _turns(model, model.table, P.T, lv.px, lv.py, 0)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    movers, lo, hi = model.opponents()
    a = kernel.duel_level(model.table, model.plans, Q, movers, lo, hi)
    b = kernel.duel_level(model.table, model.plans, P.T, movers, lo, hi)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


# equal turns: its last-turn horizon makes the pure twin take minutes (the tiny equal-turns
# duels above run out of core in both kernels)
@pytest.mark.parametrize("extra", [[], pytest.param(["--set", "equal_turns=true"], marks=pytest.mark.slow)])
def test_solve_store_cli_gives_the_tables_value_and_refuses_to_overwrite(extra, tmp_path):
    """`thousand solve ... --store FILE.npy --memory-mb MB` prints the same P(first) as the
    table solve, leaves the values in FILE.npy, and refuses (exit 2, one line, the file
    untouched) to overwrite it without --force, or to run without a budget."""
    from click.testing import CliRunner

    from thousand.cli import main

    args = ["solve", "pig", "--set", "goal=30", *extra, "--objective", "duel"]
    run = CliRunner().invoke
    table = run(main, [*args, "--tables", str(tmp_path / "t"), "--json"])
    assert table.exit_code == 0, table.output
    path = tmp_path / "pig.npy"
    out = run(main, [*args, "--store", str(path), "--memory-mb", "1", "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    solved = json.loads(table.stdout)
    assert got["start_value"] == pytest.approx(solved["start_value"], abs=1e-12)
    assert got["states"] == solved["states"] and got["residual"] <= 1e-12
    assert list(np.load(path).shape) == got["store_shape"]
    before = path.read_bytes()
    again = run(main, [*args, "--store", str(path), "--memory-mb", "1"])
    assert again.exit_code == 2 and "exists; --force replaces it" in again.output
    assert path.read_bytes() == before and not (tmp_path / "pig.npy.partial").exists()
    alone = run(main, [*args, "--store", str(tmp_path / "other.npy")])
    assert alone.exit_code == 2 and "go together" in alone.output


def test_an_interrupted_store_solve_goes_on_from_its_values(tmp_path, monkeypatch):
    """Ctrl-C in the third pass keeps FILE.npy.partial (and the rules it belongs to); the
    same call goes on from those values, without the first pass's guesses, to the values
    solved in memory, and leaves FILE.npy alone. A partial file of other rules, or a
    damaged one, is refused in one line; force starts again over it."""
    from thousand.base.errors import TableError
    from thousand.solvers import duel
    from thousand.storage.solve import solve_duel_to_store

    rs = from_mapping(TINY["overtaking-bolts"])
    path = tmp_path / "v.npy"
    partial = tmp_path / "v.npy.partial"
    real_pass, calls, stop_at = duel._pass, [], [3]

    def interrupted(*a, **k):
        calls.append(k.get("first"))
        if len(calls) == stop_at[0]:
            stop_at[0] = None
            raise KeyboardInterrupt
        return real_pass(*a, **k)

    monkeypatch.setattr(duel, "_pass", interrupted)
    with pytest.raises(KeyboardInterrupt):
        solve_duel_to_store(rs, path, 1.0, progress=False)
    assert partial.exists() and not path.exists()
    assert json.loads((tmp_path / "v.npy.partial.json").read_text())["ruleset_hash"] == rs.hash
    calls.clear()
    went_on = solve_duel_to_store(rs, path, 1.0, progress=False)
    assert calls[0] is False  # the stored values, not guesses
    model = DuelModel(rs)
    assert solved_pairs_differ(model, solve_duel(rs, model=model).P, np.load(path)) <= 1e-12
    assert went_on["residual"] <= 1e-12 and not partial.exists()
    assert not (tmp_path / "v.npy.partial.json").exists()

    other = from_mapping(TINY["barrel-push-off"])
    calls.clear()
    stop_at[0] = 2
    with pytest.raises(KeyboardInterrupt):
        solve_duel_to_store(other, tmp_path / "w.npy", 1.0, progress=False)
    with pytest.raises(TableError, match="interrupted solve of other rules"):
        solve_duel_to_store(rs, tmp_path / "w.npy", 1.0, progress=False)
    back = np.load(tmp_path / "w.npy.partial", mmap_mode="r+")
    back[0, 0] = 7.0
    back.flush()
    del back
    with pytest.raises(TableError, match="cannot go on .*outside \\[0, 1\\]"):
        solve_duel_to_store(other, tmp_path / "w.npy", 1.0, progress=False)
    monkeypatch.setattr(duel, "_pass", real_pass)
    again = solve_duel_to_store(other, tmp_path / "w.npy", 1.0, force=True, progress=False)
    assert again["residual"] <= 1e-12


def test_the_in_memory_limit_points_at_the_store_and_does_not_bind_it(tmp_path):
    """A duel too large for memory is refused in one line that names --store; the model
    an out-of-core solve builds takes no pair limit."""
    from click.testing import CliRunner

    from thousand.cli import main

    r = CliRunner().invoke(main, ["solve", "plain", "--set", "goal=100000", "--objective", "duel"])
    assert r.exit_code == 2 and "--store FILE.npy --memory-mb MB solves it out of core" in r.output
    rs = from_mapping(TINY["overtaking-bolts"])
    n = DuelModel(rs).n
    with pytest.raises(ThousandError, match="in memory"):
        DuelModel(rs, max_pairs=n * n - 1)
    assert DuelModel(rs, max_pairs=None).n == n
