"""The environments for bots that learn (thousand.env): PettingZoo's and Gymnasium's own
checks, games that follow the rules, and policies that evaluate as they were trained."""

from __future__ import annotations

import json
import math
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import gymnasium  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test, seed_test  # noqa: E402

import thousand.env as tenv  # noqa: E402
from thousand.analysis.bots import BotState, HoldBot, load_bot  # noqa: E402
from thousand.analysis.observation import Encoding  # noqa: E402
from thousand.base.errors import BotError, ThousandError  # noqa: E402
from thousand.cli import main  # noqa: E402
from thousand.engine.player import PlayerState  # noqa: E402
from thousand.engine.turn import TurnRules  # noqa: E402
from thousand.rules.ruleset import load_ruleset  # noqa: E402

BOTS = Path(__file__).resolve().parent / "bots"
EVALUATE_PIG_30 = ("evaluate", "pig", "--set", "goal=30", "--games", "0", "--json")


@pytest.mark.parametrize(
    "rules, players, sets",
    [("pig", 3, ()), ("classic", 2, ()), ("farkle", 4, ()), ("pig", 3, ("goal=30", "equal_turns=true"))],
)
def test_the_pettingzoo_environment_passes_pettingzoos_tests(rules, players, sets):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's advice to prefer a Box over a Dict
        api_test(tenv.env(rules=rules, players=players, overrides=sets), num_cycles=300)
        seed_test(lambda: tenv.env(rules=rules, players=players, overrides=sets), num_cycles=100)


@pytest.mark.parametrize(
    "rules, opponent, players", [("pig", "hold:20", 2), ("classic", "optimal", 2), ("pig", "race", 3)]
)
def test_the_gymnasium_environment_passes_gymnasiums_checker(rules, opponent, players):
    e = gymnasium.make("thousand/Duel-v0", rules=rules, opponent=opponent, players=players)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(e.unwrapped)
    obs, info = e.reset(seed=5)
    assert obs["action_mask"].sum() >= 2 and np.array_equal(info["action_mask"], obs["action_mask"])
    assert e.observation_space.contains(obs)


def hold_policy(n: int, goal: int):
    """Hold-at-n, written against the observation's documented layout (two players)."""
    enc_total = 19

    def policy(obs, mask):
        face = int(np.flatnonzero(obs[21:27])[0]) + 1
        total = obs[enc_total] + face
        return 2 * (face - 1) + int(total >= n or obs[0] + total >= goal)

    return policy


def test_games_in_the_environment_are_won_as_often_as_the_exact_evaluation_says(tmp_path):
    """Hold-at-10 against hold-at-10 in Pig to 30, played in the PettingZoo environment by a
    policy reading the observation: the first seat's wins over 4,000 games lie within four
    standard errors of the exact evaluation (every turn enumerated, a linear solve)."""
    r = CliRunner().invoke(
        main,
        ["evaluate", "pig", "--set", "goal=30", "--bot", "hold:10", "--opponent", "hold:10"]
        + ["--games", "0", "--json", "--tables", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    p = json.loads(r.stdout)["exact"]["value_first"]
    e = tenv.raw_env(rules="pig", players=2, overrides=("goal=30",))
    policy = hold_policy(10, 30)
    games, first = 4000, 0.0
    e.reset(seed=11)
    for _g in range(games):
        e.reset()
        while not all(e.terminations.values()):
            obs = e.observe(e.agent_selection)
            e.step(policy(obs["observation"], obs["action_mask"]))
        first += e.rewards["player_0"]
        assert sum(e.rewards.values()) == 1.0
    se = math.sqrt(p * (1 - p) / games)
    assert abs(first / games - p) < 4 * se, (first / games, p)


def test_a_policy_on_observation_and_mask_evaluates_as_the_bot_it_mirrors(tmp_path):
    """``--bot policy:FILE:ATTR``: tests/bots/policies.py's hold20 reads only the observation
    and plays hold-at-20: its exact chance against the optimum equals the built-in's."""
    # a generous timer: a late answer is a fault (the fallback played), which a loaded machine must not cause
    args = [
        "evaluate",
        "pig",
        "--opponent",
        "optimal",
        "--games",
        "0",
        "--json",
        "--no-best-response",
        "--timeout",
        "60",
    ]
    got = {}
    for spec in ("hold:20", f"policy:{BOTS / 'policies.py'}:hold20"):
        r = CliRunner().invoke(main, [*args, "--bot", spec])
        assert r.exit_code == 0, r.output
        got[spec] = json.loads(r.stdout)["exact"]
    a, b = got.values()
    assert abs(a["value_first"] - b["value_first"]) < 1e-12 and abs(a["value_second"] - b["value_second"]) < 1e-12
    assert a["decisions"] == b["decisions"]


def test_a_policy_that_answers_garbage_is_a_counted_fault_and_a_wrong_one_is_refused():
    rs = load_ruleset("pig")
    bot = load_bot(f"policy:{BOTS / 'policies.py'}:illegal", rs)
    engine = TurnRules(rs)
    s = engine.after_roll(engine.start(PlayerState(0)), [4])
    state = BotState.at(engine, s, PlayerState(0))
    assert bot.choose(state) in state.legal and bot.faults.total == 1
    with pytest.raises(BotError, match="two arguments"):
        load_bot(f"policy:{BOTS / 'policies.py'}:one_argument", rs)
    r = CliRunner().invoke(main, ["evaluate", "pig", "--bot", f"policy:{BOTS / 'nothing.py'}:x"])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1


def test_an_action_outside_the_mask():
    """The wrapped PettingZoo environment ends the game with -1 to the offender; the raw one
    raises; the Gymnasium one ends the game lost (-1)."""
    e = tenv.env(rules="pig", players=2)
    e.reset(seed=1)
    who = e.agent_selection
    mask = e.observe(who)["action_mask"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(int(np.flatnonzero(mask == 0)[0]))
    assert e.rewards[who] == -1 and all(e.terminations.values())
    raw = tenv.raw_env(rules="pig", players=2)
    raw.reset(seed=1)
    with pytest.raises(ValueError, match="not marked"):
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"] == 0)[0]))
    g = gymnasium.make("thousand/Duel-v0", rules="pig", opponent="hold:20")
    obs, _info = g.reset(seed=2)
    _obs, reward, terminated, truncated, info = g.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert reward == -1 and terminated and info["illegal"]


def test_the_observation_is_laid_out_as_documented():
    """Every player's fields from the viewer's seat, then mover, turn total, dice, the
    roll's faces, hot, seat, to beat; action 2k + 1 is set-aside k and stop."""
    rs = load_ruleset("classic")
    enc = Encoding(rs, 3)
    x = [PlayerState(100, True, 1), PlayerState(0, False), PlayerState(555, True, 2, barrel_tries=0)]
    obs = enc.observe(x, viewer=1, mover=2, total=35, roll=(1, 1, 5), hot=False)
    names = dict(zip(enc.names, obs))
    assert names["player0.score"] == 0 and names["player0.opened"] == 0  # the viewer first
    assert names["player1.score"] == 555 and names["player1.bolts"] == 2 and names["player2.score"] == 100
    assert names["mover"] == 1 and names["turn_total"] == 35 and names["dice_thrown"] == 3
    assert names["roll.1"] == 2 and names["roll.5"] == 1 and names["seat"] == -1 and names["to_beat"] == -1
    engine = TurnRules(rs)
    s = engine.after_roll(engine.start(PlayerState(100)), [1, 1, 5, 2, 3])
    legal = engine.legal(s)
    for a in legal:
        k = enc.index(a)
        assert enc.keeps[k // 2] == a.keep and (k % 2 == 1) == (not a.roll)
        assert enc.action(k, legal) == a
    assert enc.mask(legal).sum() == len(legal) and enc.action(enc.n_actions + 3, legal) is None


def test_poker_dice_has_no_environment_and_says_so():
    with pytest.raises(ThousandError, match="poker dice"):
        tenv.raw_env(rules="poker")


def test_a_gymnasium_agent_against_hold_wins_like_the_bot_it_plays():
    """The agent, seated first, plays hold-at-20 against hold-at-20: its wins over 1,500
    games match the exact first-seat chance within four standard errors."""
    r = CliRunner().invoke(
        main, ["evaluate", "pig", "--bot", "hold:20", "--opponent", "hold:20", "--games", "0"] + ["--json"]
    )
    p = json.loads(r.stdout)["exact"]["value_first"]
    g = gymnasium.make("thousand/Duel-v0", rules="pig", opponent="hold:20", seat="first")
    policy = hold_policy(20, 100)
    wins, games = 0.0, 1500
    rng = random.Random(3)
    for _g in range(games):
        obs, _info = g.reset(seed=rng.randrange(2**31))
        done = False
        while not done:
            # a game lost before the agent's first decision: any action reports it
            action = policy(obs["observation"], obs["action_mask"]) if obs["action_mask"].any() else 0
            obs, reward, terminated, truncated, _info = g.step(action)
            done = terminated or truncated
        wins += reward
    se = math.sqrt(p * (1 - p) / games)
    assert abs(wins / games - p) < 4 * se, (wins / games, p)
    assert HoldBot(20).deterministic


def test_the_q_learning_example_trains_in_the_environment_and_is_rated_exactly(tmp_path, monkeypatch):
    """docs/examples/qlearn_pig.py: 5,000 episodes against hold-at-10 in Pig to 30 (seconds),
    then ``thousand evaluate --bot policy:...`` rates the table exactly, with its best
    response. It must beat the cautious bot (which stops at its first chance) by far."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "docs" / "examples" / "qlearn_pig.py"
    spec = importlib.util.spec_from_file_location("qlearn_pig", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    np.savez(tmp_path / "q.npz", Q=mod.train(goal=30, episodes=5000, opponent="hold:10", seed=1))
    monkeypatch.setenv("QTABLE", str(tmp_path / "q.npz"))
    args = [*EVALUATE_PIG_30, "--timeout", "60", "--tables", str(tmp_path)]
    r = CliRunner().invoke(main, [*args, "--bot", f"policy:{path}:policy"])
    assert r.exit_code == 0, r.output
    learned = json.loads(r.stdout)["exact"]
    cautious = json.loads(CliRunner().invoke(main, [*args, "--bot", "cautious", "--no-best-response"]).stdout)["exact"]
    assert learned["value_first"] > cautious["value_first"] + 0.1
    br = learned["best_response"]
    assert br["gap_first"] >= -1e-12 and br["gap_second"] >= -1e-12
