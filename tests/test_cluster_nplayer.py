"""The N-player equilibrium on a Dask cluster (thousand.solvers.cluster_nplayer), on a
LocalCluster: the single machine's values state by state, a killed worker, a solve stopped
and started again, the command line and the Python API, and the split of the values."""

import functools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from clusterkit import killer
from tiny import TINY_DUELS, TINY_EQUAL_TURNS

from thousand.cli import main
from thousand.rules import from_mapping
from thousand.rules.ruleset import load_ruleset
from thousand.solvers.cluster import ClusterError
from thousand.solvers.cluster_nplayer import NPlayerBlock, key_owner, solve_nplayer_on_cluster
from thousand.solvers.nplayer import NPlayerGame, _levels, _moved, solve_nplayer

TINY = {**TINY_DUELS, **TINY_EQUAL_TURNS}


def _rules(name: str, overrides: tuple | None):
    return from_mapping(TINY[name]) if overrides is None else load_ruleset(name, list(overrides))


@functools.cache
def _one_machine(name: str, overrides: tuple | None = None):
    """The single machine's equilibrium of three players, solved once per test process."""
    rs = _rules(name, overrides)
    return rs, solve_nplayer(rs, 3)


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("plain", ("goal=100",)),  # one sweep; two movers mix on their orbits
        ("equal-pig-like", None),  # equal turns: the mover's seat in the state
    ],
)
def test_the_cluster_finds_the_single_machine_equilibrium(client, tmp_path, name, overrides):
    rs, one = _one_machine(name, overrides)
    many, run = solve_nplayer_on_cluster(rs, 3, client, tmp_path / "ck", checkpoint_seconds=0.5)
    assert run.workers == 2 and run.blocks == 2 and run.recoveries == 0
    assert many.V.shape == one.V.shape
    diff = np.abs(one.V - many.V)
    assert diff.max() <= 1e-12, diff.max()
    assert many.certificate <= 1e-12
    # the same movers mix, with the same weights
    assert sorted(many.mixed) == sorted(one.mixed)
    assert all(abs(many.mixed[k] - w) <= 1e-9 for k, w in one.mixed.items())
    if name == "plain":
        assert len(one.mixed) == 2 and many.passes == 1
    # (dump-opening, whose dumps lower the level, is compared in the next two tests)
    assert all(m["busy_s"] > 0 for m in run.worker_memory) and run.bytes_moved > 0  # each worker computed


def test_a_killed_worker_does_not_lose_the_equilibrium(client, tmp_path):
    rs, one = _one_machine("dump-opening")
    kill = killer(client, 3, 3)
    many, run = solve_nplayer_on_cluster(rs, 3, client, tmp_path / "ck", checkpoint_seconds=0.2, progress=kill)
    assert kill.killed and run.recoveries >= 1
    assert np.abs(one.V - many.V).max() <= 1e-12 and many.certificate <= 1e-12
    assert run.workers == 2 and run.blocks == 2 and many.passes > 1 and not one.mixed and not many.mixed
    client.wait_for_workers(2, timeout=60)


def test_a_stopped_solve_goes_on_from_its_checkpoint(client, tmp_path):
    rs, one = _one_machine("dump-opening")
    ck = tmp_path / "ck"

    def stop(info):
        if info["pass"] == 4 and info["level"] >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        solve_nplayer_on_cluster(rs, 3, client, ck, checkpoint_seconds=0.0, progress=stop)
    state = json.loads((ck / "state.json").read_text())
    assert state["pass"] == 4 and state["identity"]["objective"] == "players3"
    # the checkpoint is of these rules and three players: another game is refused in one line
    with pytest.raises(ClusterError, match="other rules"):
        solve_nplayer_on_cluster(from_mapping(TINY["barrel-push-off"]), 3, client, ck)
    passes = []
    many, run = solve_nplayer_on_cluster(rs, 3, client, ck, progress=lambda info: passes.append(info["pass"]))
    assert run.resumed_from is not None and run.resumed_from["pass"] == 4
    assert passes[0] == 4 and many.passes >= 4
    assert np.abs(one.V - many.V).max() <= 1e-12


def test_the_command_line_and_the_python_api(client, tmp_path):
    address = client.scheduler.address
    r = CliRunner().invoke(
        main,
        ["solve", "pig", "--set", "goal=40", "--players", "3", "--cluster", address, "--tables", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    folder = next(p for p in tmp_path.iterdir() if p.name.endswith("-players3"))
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["cluster"]["spec"] == address and meta["cluster"]["workers"] == 2
    assert meta["certificate"] <= 1e-12 and meta["method"] == "equilibrium"
    _rs, one = _one_machine("pig", ("goal=40",))
    assert np.abs(np.load(folder / "values.npy") - one.V).max() <= 1e-12
    assert not (tmp_path / ".partial").exists()  # the checkpoints go once the table is written

    import thousand

    rs, one = _one_machine("equal-pig-like")
    sol = thousand.solve_players(rs, 3, str(tmp_path), cluster=address, force=True)
    assert sol.solved_now and sol.table.meta["cluster"]["blocks"] == 2
    assert np.abs(np.asarray(sol.table.values) - one.V).max() <= 1e-12


@pytest.mark.parametrize(
    "args, says",
    [
        (["--players", "3", "--cluster", "local:1", "--store", "x.npy", "--memory-mb", "5"], "--cluster solves into a"),
        (["--players", "3", "--checkpoint", "ck"], "--checkpoint goes with --cluster"),
        (["--players", "3", "--cluster", "local:x", "--force"], "local:N"),
    ],
)
def test_cli_refusals_are_one_line(tmp_path, args, says):
    r = CliRunner().invoke(main, ["solve", "plain", "--set", "goal=100", "--tables", str(tmp_path), *args])
    assert r.exit_code == 2, r.output
    assert says in r.output and len(r.output.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["overtaking-bolts", "barrel-push-off", "equal-overtaking-bolts"])
def test_the_split_keeps_every_turns_reads_in_its_block(name):
    """Every end's changes to the other players (overtaking, push-off) map a tuple of
    player states into the same block: a turn reads only its own block's rows."""
    game = NPlayerGame(from_mapping(TINY[name]), 3)
    owner = key_owner(game, 4)
    assert owner.shape == (game.M1,) and owner.min() == 0
    keys = np.arange(game.M1)
    changed = 0
    for rows in (game.ends, game.early_ends):
        for e in rows:
            if e.opp is not None:
                moved = _moved(keys, e.opp, game.m, game.N)
                assert np.array_equal(owner[moved], np.broadcast_to(owner, moved.shape))
                changed += int(np.sum(moved != keys))
    assert changed > 0  # the rules do move other players


def test_where_nothing_joins_player_states_the_blocks_balance():
    game = NPlayerGame(load_ruleset("plain", ["goal=100"]), 3)
    counts = np.bincount(key_owner(game, 4))
    assert len(counts) == 4 and counts.max() - counts.min() <= 1


def test_a_block_holds_its_rows_and_refuses_others(tmp_path):
    rs = from_mapping(TINY["overtaking-bolts"])
    game = NPlayerGame(rs, 3)
    owner = key_owner(game, 2)
    mine, other = np.flatnonzero(owner == 0), np.flatnonzero(owner == 1)
    block = NPlayerBlock(rs, 3, mine)

    def read(b, states):
        return b.step(None, ("read", (states,), {}))[1]

    states = mine[:5] * game.m + 1  # rows (x_0, x_1) of the block, x_2 the second player state
    assert np.allclose(read(block, states), 1 / 3)
    new = np.random.default_rng(2).random((5, 3))
    old, _ = block.step((states, new), None)
    assert np.allclose(old, 1 / 3) and np.array_equal(read(block, states), new)
    with pytest.raises(ClusterError, match="does not hold"):
        read(block, other[:1] * game.m)
    with pytest.raises(ClusterError, match="no call"):
        block.step(None, ("save", ("/tmp", 0), {}))
    # its rows come back from a checkpoint, read by a block of another split
    block.save(str(tmp_path), 0)
    NPlayerBlock(rs, 3, other).save(str(tmp_path), 1)
    whole = NPlayerBlock(rs, 3, np.arange(game.M1), checkpoint=str(tmp_path))
    assert np.array_equal(read(whole, states), new)


@pytest.mark.parametrize(
    "name, overrides, players",
    [("pig", ("goal=20",), 4), ("equal-barrel", None, 3), ("overtaking-bolts", None, 3)],
)
def test_levels_built_one_at_a_time_are_every_states_levels(name, overrides, players):
    """The coordinator builds each level from the player states' units alone; by brute
    force over every state, the levels (sums of units, highest first) are the same."""
    game = NPlayerGame(_rules(name, overrides), players)
    units = np.array([x.score // game.rs.unit for x in game.space.states])
    digits = np.indices((game.m,) * players).reshape(players, -1)
    level = units[digits].sum(axis=0)
    expected = [
        np.concatenate([c * game.total + np.flatnonzero(level == L) for c in range(game.seats)])
        for L in sorted(set(level.tolist()), reverse=True)
    ]
    got = _levels(game)
    assert len(got) == len(expected)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))
