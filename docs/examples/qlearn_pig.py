"""A tiny tabular Q-learning bot for Pig, trained in the Gymnasium environment and then
rated exactly by ``thousand evaluate`` (docs/bots.md, "Bots from reinforcement learning").

    python docs/examples/qlearn_pig.py --goal 30 --episodes 20000 --out pig-q.npz
    QTABLE=pig-q.npz thousand evaluate pig --set goal=30 \\
        --bot policy:docs/examples/qlearn_pig.py:policy --games 0

The agent sees the observation vector and the action mask; its table is indexed by its
score, the opponent's, and the turn total with the die just thrown, and holds the value of
rolling on and of stopping. Rewards: +1 for a win, 0 for a loss.
"""

from __future__ import annotations

import argparse
import os

import gymnasium
import numpy as np

import thousand.env  # noqa: F401 - registers thousand/Duel-v0

# the observation of two players (docs/bots.md lists every entry)
MY_SCORE, OPP_SCORE, TURN_TOTAL, ROLL = 0, 9, 19, 21
GOAL_CAP = 100  # the largest goal the table has room for


def features(obs) -> tuple[int, int, int, int]:
    """(my score, the opponent's, the turn total with this die, the die's face); a turn total
    past the goal counts as the goal (every total there wins by stopping)."""
    face = int(np.flatnonzero(obs[ROLL : ROLL + 6])[0]) + 1
    me = int(obs[MY_SCORE])
    return me, int(obs[OPP_SCORE]), min(int(obs[TURN_TOTAL]) + face, GOAL_CAP - me), face


def train(goal: int = 30, episodes: int = 20000, opponent: str = "hold:10", seed: int = 0):
    """Q-learning (step size 0.1, epsilon-greedy 0.1, no discount) against ``opponent``;
    returns the table Q[my score, opponent's score, turn total, roll on / stop]."""
    env = gymnasium.make("thousand/Duel-v0", rules="pig", overrides=[f"goal={goal}"], opponent=opponent)
    rng = np.random.default_rng(seed)
    Q = np.zeros((goal, goal, GOAL_CAP + 1, 2))
    obs, _info = env.reset(seed=seed)
    for _episode in range(episodes):
        obs, _info = env.reset()
        done = not obs["action_mask"].any()  # lost before its first decision: nothing to learn
        while not done:
            me, opp, total, face = features(obs["observation"])
            a = int(rng.integers(2)) if rng.random() < 0.1 else int(np.argmax(Q[me, opp, total]))
            nxt, reward, terminated, truncated, _info = env.step(2 * (face - 1) + a)
            done = terminated or truncated
            if done:
                target = reward
            else:
                m2, o2, t2, _f = features(nxt["observation"])
                target = np.max(Q[m2, o2, t2])
            Q[me, opp, total, a] += 0.1 * (target - Q[me, opp, total, a])
            obs = nxt
    return Q


_TABLE = None


def policy(observation, mask):
    """The trained table's choice (the table from $QTABLE, default pig-q.npz)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = np.load(os.environ.get("QTABLE", "pig-q.npz"))["Q"]
    me, opp, total, face = features(observation)
    return 2 * (face - 1) + int(np.argmax(_TABLE[me, opp, total]))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goal", type=int, default=30)
    ap.add_argument("--episodes", type=int, default=20000)
    ap.add_argument("--opponent", default="hold:10")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="pig-q.npz")
    args = ap.parse_args()
    np.savez(args.out, Q=train(args.goal, args.episodes, args.opponent, args.seed))
    print(f"wrote {args.out}")
