"""The duel on a Dask cluster (thousand.solvers.cluster), on a LocalCluster: the same values
as the single-machine solver state by state, a killed worker, an interrupted or killed client,
refusals."""

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tiny
from click.testing import CliRunner
from clusterkit import killer
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny import TINY_DUELS, TINY_EQUAL_TURNS

from thousand.base.progress import Progress
from thousand.cli import main
from thousand.rules import from_mapping
from thousand.rules.ruleset import load_ruleset
from thousand.solvers.cluster import (
    ClusterError,
    DuelBlock,
    _ranges,
    by_block,
    connect,
    partition,
    solve_duel_on_cluster,
)
from thousand.solvers.duel import DuelModel, _level, _level_sums, solve_duel

# six-dice with its equal turns and bolts, scaled down: 30 player states, 1,800 pairs (a seat
# against the other), seven passes; a bolt's penalty (50) is the whole goal
SMALL_SIX = ("goal=50", "pits=[]", "pit_attempts=0", 'barrel={kind="none"}')
# classic without the barrel on a board of 300 (a pit, samosval, overtaking, bolts): 180 player
# states, 32,400 pairs, 17 passes, cheap to set up -- for the runs that are stopped and started
SMALL_CLASSIC = ("goal=300", "pits=[{low=100,exit=150}]", "dump=[205]")


@functools.cache
def _one_machine(name: str, overrides: tuple | None):
    """The single-machine passes' solution, solved once per test process."""
    rs = from_mapping(TINY_DUELS[name]) if overrides is None else load_ruleset(name, list(overrides))
    return rs, solve_duel(rs, method="passes")


def test_blocks_cover_the_states_once_and_read_only_their_own_rows():
    for rs in (from_mapping(TINY_DUELS["overtaking-bolts"]), from_mapping(TINY_DUELS["barrel-push-off"])):
        model = DuelModel(rs)
        parts = partition(model, 3)
        every = np.concatenate(parts)
        assert sorted(every.tolist()) == list(range(model.n))
        owner = np.empty(model.n, dtype=int)
        for k, s in enumerate(parts):
            owner[s] = k
        p = model.plans
        # a turn against y reads the rows y, pushed(y), overtaken(y), overtaken(pushed(y))
        for y in range(model.n):
            for z in (p.pushed[y], p.overtaken[y], p.overtaken[p.pushed[y]]):
                assert owner[z] == owner[y]
    # where nothing joins states (six-dice: no overtaking, no push-off) the blocks balance
    model = DuelModel(load_ruleset("six-dice", SMALL_SIX))
    sizes = [len(s) for s in partition(model, 4)]
    assert len(sizes) == 4 and max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("plain", ()),
        ("six-dice", SMALL_SIX),
        ("overtaking-bolts", None),
        ("barrel-push-off", None),
        ("dump-opening", None),
    ],
)
def test_the_cluster_finds_the_single_machine_values(client, tmp_path, name, overrides):
    rs, one = _one_machine(name, overrides)
    many = solve_duel_on_cluster(rs, client, tmp_path / "ck", checkpoint_seconds=0.5)
    assert many.residual <= 1e-13
    assert many.workers == 2
    # plain and six-dice have no overtaking and no push-off: one block per worker
    assert many.blocks == 2 if overrides is not None else 1 <= many.blocks <= 2
    diff = np.abs(one.model.table_values(one.P) - many.values)
    assert diff.max() <= 1e-12, diff.max()
    # and the policy iteration's table (the default single-machine method), where it is another solve
    if overrides is None:
        _, best = tiny.solved(TINY_DUELS, name)
        assert np.abs(best.model.table_values(best.P) - many.values).max() <= 1e-12


def test_a_killed_worker_does_not_lose_the_solve(client, tmp_path):
    rs, one = _one_machine("overtaking-bolts", None)  # penalties: many passes, checkpoints between
    kill = killer(client, 2, 3)
    many = solve_duel_on_cluster(rs, client, tmp_path / "ck", checkpoint_seconds=0.2, progress=kill)
    assert kill.killed and many.recoveries >= 1
    assert np.abs(one.model.table_values(one.P) - many.values).max() <= 1e-12
    client.wait_for_workers(2, timeout=60)


def test_a_checkpoint_of_other_rules_or_damaged_is_refused(client, tmp_path):
    rs = from_mapping(TINY_DUELS["overtaking-bolts"])
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "state.json").write_text(json.dumps({"identity": {"ruleset": "plain"}, "gen": 1}))
    with pytest.raises(ClusterError, match="other rules"):
        solve_duel_on_cluster(rs, client, folder)
    # a block whose values are not probabilities
    model = DuelModel(rs)
    block = DuelBlock(rs, np.arange(model.n))
    gen = folder / "gen-1"
    gen.mkdir()
    block.save(str(gen), 0)
    values = np.load(gen / "block-0.values.npy")
    values[3, 4] = 7.0
    np.save(gen / "block-0.values.npy", values)
    (folder / "state.json").write_text(
        json.dumps(
            {
                "identity": {"ruleset": rs.name, "ruleset_hash": rs.hash, "states": model.n, "objective": "duel"},
                "gen": 1,
                "pass": 1,
                "level": 3,
                "change": 0.5,
                "history": [],
            }
        )
    )
    with pytest.raises(ClusterError, match=r"outside \[0, 1\]"):
        solve_duel_on_cluster(rs, client, folder)


def test_a_block_reloads_what_any_partition_saved(tmp_path):
    rs = from_mapping(TINY_DUELS["overtaking-bolts"])
    model = DuelModel(rs)
    rng = np.random.default_rng(5)
    parts = partition(model, 3)
    blocks = [DuelBlock(rs, s) for s in parts]
    for k, b in enumerate(blocks):
        b.P[b.states[:, None], b._cols] = rng.random((len(b.states), b.width))
        b.save(str(tmp_path), k)
    whole = DuelBlock(rs, np.arange(model.n), checkpoint=str(tmp_path))
    for b in blocks:
        s, v = b.rows()
        assert np.array_equal(whole.P[s[:, None], whole._cols[s]], v)


def test_the_progress_line_counts_levels_and_pairs(capsys):
    bar = Progress("solving x duel on 2 workers")
    bar.t0 -= 5  # shown once a solve has run for a second
    bar.levels({"pass": 2, "level": 10, "levels": 40, "pairs_done": 1000, "pairs": 4000, "change": 0.25})
    err = capsys.readouterr().err
    assert "pass 2, level 10 of 40" in err and "pairs/s" in err and "left in the pass" in err
    # a solve asked for no progress (the Python API's default) prints none, not even at a pass's end
    quiet = Progress("solving x duel on 2 workers", enabled=False)
    quiet.t0 -= 5
    quiet.levels({"pass": 1, "level": 40, "levels": 40, "pairs_done": 4000, "pairs": 4000, "change": 0.25})
    assert capsys.readouterr().err == ""


def test_a_sweeping_solve_counts_its_sweep_and_never_moves_back(capsys):
    """An N-player solve that sweeps its levels again learns how many sweeps it needs as it
    goes: the line keeps the sweep's own count of states and says the number of sweeps is
    an estimate; when the estimate grows, the bar does not fall back."""
    import re

    bar = Progress("solving x, 3 players")
    bar.tty = True  # redrawn at every call
    bar.t0 -= 50
    bar.sweeps(500, 1000, sweep=2, sweeps=3)  # half of 3 sweeps
    bar.sweeps(900, 1000, sweep=2, sweeps=9)  # the estimate grew: 21% of 9 sweeps
    err = capsys.readouterr().err
    shown = [line for line in err.split("\r") if line]
    assert "sweep 2 of about 3, 500 of 1,000 states" in shown[0]
    assert "sweep 2 of about 9, 900 of 1,000 states" in shown[1]
    cells = [len(re.search(r"\[(#*) *\]", line).group(1)) for line in shown]
    assert cells == [10, 10]  # half a bar, kept although 1.9 of 9 sweeps is less
    bar.sweeps(1000, 1000)  # one sweep: the plain count
    assert "1,000 of 1,000 states [####################]" in capsys.readouterr().err


def test_connect_refuses_what_is_not_a_cluster():
    with pytest.raises(ClusterError, match="local:N"):
        connect("local:0")
    with pytest.raises(ClusterError, match="scheduler address"):
        connect("somewhere")


@pytest.mark.parametrize(
    "args, says",
    [
        (["--objective", "race", "--cluster", "local:1"], "--cluster solves the duel"),
        (["--objective", "duel", "--cluster", "local:1", "--store", "x.npy", "--memory-mb", "5"], "no --store"),
        (["--objective", "duel", "--checkpoint", "ck"], "--checkpoint goes with --cluster"),
        (["--objective", "duel", "--cluster", "local:x", "--force"], "local:N"),
    ],
)
def test_cli_refusals_are_one_line(tmp_path, args, says):
    r = CliRunner().invoke(main, ["solve", "plain", "--tables", str(tmp_path), *args])
    assert r.exit_code == 2, r.output
    assert says in r.output and len(r.output.strip().splitlines()) == 1


def test_without_dask_the_option_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    r = CliRunner().invoke(
        main, ["solve", "plain", "--objective", "duel", "--cluster", "local:2", "--force", "--tables", str(tmp_path)]
    )
    assert r.exit_code == 2
    assert "pip install 'thousand[cluster]'" in r.output and len(r.output.strip().splitlines()) == 1


def _table_values(folder):
    meta = json.loads((folder / "meta.json").read_text())
    return meta, np.load(folder / "values.npy")


def _stop_at_pass(cmd: list, ck, at_pass: int, sig: int) -> subprocess.CompletedProcess:
    """Run ``cmd`` until its checkpoint names pass ``at_pass``, then send the client ``sig``;
    its local workers are killed after it (they would otherwise linger)."""
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.time() + 240
        while time.time() < deadline:
            try:
                if json.loads((ck / "state.json").read_text())["pass"] >= at_pass:
                    break
            except (OSError, ValueError, KeyError):
                pass
            assert run.poll() is None, run.stderr.read().decode()
            time.sleep(0.2)
        else:
            pytest.fail(f"no checkpoint of pass {at_pass} after 240 s")
        os.kill(run.pid, sig)
        out, err = run.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(cmd, run.returncode, out.decode(), err.decode())


def test_an_interrupted_or_killed_client_goes_on_from_its_checkpoint(tmp_path):
    tables, ck = tmp_path / "tables", tmp_path / "ck"
    sets = sum((["--set", o] for o in SMALL_CLASSIC), [])
    cmd = [sys.executable, "-m", "thousand.cli", "solve", "classic-nobarrel", *sets, "--objective", "duel"]
    cmd += ["--cluster", "local:2", "--tables", str(tables), "--checkpoint", str(ck), "--json"]
    no_table = lambda: not tables.exists() or not any(p.name.endswith("-duel") for p in tables.iterdir())  # noqa: E731
    # Ctrl-C: a one-line word on where the checkpoint is, and no table
    first = _stop_at_pass(cmd, ck, 2, signal.SIGINT)
    assert first.returncode != 0 and "the checkpoint stays in" in first.stderr, first.stderr
    assert no_table()
    # kill -9 of the client, in a run that went on from that checkpoint
    second = _stop_at_pass(cmd, ck, 4, signal.SIGKILL)
    assert second.returncode == -signal.SIGKILL and "going on from the checkpoint" in second.stderr
    assert no_table()
    state = json.loads((ck / "state.json").read_text())
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "going on from the checkpoint" in again.stderr
    out = json.loads(again.stdout)
    assert out["solved_now"] and out["iterations"] >= state["pass"]
    assert not ck.exists()  # removed once the table is written
    _, one = _one_machine("classic-nobarrel", SMALL_CLASSIC)
    folder = next(p for p in tables.iterdir() if p.name.endswith("-duel"))
    meta, values = _table_values(folder)
    assert meta["cluster"]["resumed"] is True
    assert np.abs(values - one.model.table_values(one.P)).max() <= 1e-12


def test_the_python_api_takes_the_same_option(tmp_path):
    import thousand

    rs = from_mapping(TINY_DUELS["dump-opening"])
    sol = thousand.solve(rs, "duel", cluster="local:2", tables=str(tmp_path), force=True)
    assert sol.solved_now and sol.info["cluster"]["workers"] == 2 and sol.method == "passes"
    _, one = _one_machine("dump-opening", None)
    assert np.abs(np.asarray(sol.table.values) - one.model.table_values(one.P)).max() <= 1e-12
    assert not (tmp_path / ".partial").exists()


def test_a_running_scheduler_is_used_by_its_address(client, tmp_path):
    address = client.scheduler.address
    assert address.startswith("tcp://")
    r = CliRunner().invoke(
        main,
        ["solve", "plain", "--set", "goal=60", "--objective", "duel", "--cluster", address, "--tables", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    folder = next(p for p in tmp_path.iterdir() if p.name.endswith("-duel"))
    meta, values = _table_values(folder)
    assert meta["cluster"]["spec"] == address and meta["cluster"]["workers"] == 2
    assert 0 < sum(meta["cluster"]["worker_busy_s"]) <= 2 * meta["solve_seconds"]
    _, one = _one_machine("plain", ("goal=60",))
    assert np.abs(values - one.model.table_values(one.P)).max() <= 1e-12
    with pytest.raises(ClusterError, match="no Dask scheduler answers"):
        connect("tcp://127.0.0.1:9", timeout=2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 6)), max_size=12), st.integers(1, 5))
def test_ranges_and_blocks_are_what_their_loops_would_give(spans, blocks):
    a = np.array([s for s, _ in spans], dtype=np.int64)
    b = a + np.array([k for _, k in spans], dtype=np.int64)
    loop = [i for s, e in zip(a.tolist(), b.tolist()) for i in range(s, e)]
    assert _ranges(a, b).tolist() == loop
    keys = np.array(loop, dtype=np.int64) % blocks
    parts = by_block(keys, blocks)
    assert [p.tolist() for p in parts] == [np.flatnonzero(keys == k).tolist() for k in range(blocks)]


def test_each_block_lists_its_pairs_of_a_level_in_the_coordinators_order():
    # the coordinator's level (px, py) filtered by owner must be what each block computes and
    # stores, pair for pair: the values travel as bare arrays in that order
    for rs in (from_mapping(TINY_EQUAL_TURNS["equal-barrel"]), from_mapping(TINY_DUELS["overtaking-bolts"])):
        model = DuelModel(rs)
        parts = partition(model, 3)
        owner = np.empty(model.n, dtype=np.int64)
        for k, s in enumerate(parts):
            owner[s] = k
        blocks = [DuelBlock(rs, s) for s in parts]
        mover_pos = np.full(model.n, -1, dtype=np.int64)
        for i, L in enumerate(_level_sums(model)):
            lv = _level(model, L, mover_pos)
            for k, block in enumerate(blocks):
                _, (cx, cy), (sx, sy), _ = block._pairs(i)
                mine_c, mine_s = owner[lv.py] == k, owner[lv.px] == k
                assert np.array_equal(cx, lv.px[mine_c]) and np.array_equal(cy, lv.py[mine_c])
                assert np.array_equal(sx, lv.px[mine_s]) and np.array_equal(sy, lv.py[mine_s])
