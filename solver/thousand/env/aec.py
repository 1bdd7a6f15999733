"""The PettingZoo AEC environment of any dice ruleset and number of players.

    from thousand.env import env
    e = env(rules="pig", players=3)            # or raw_env(...), without the wrappers
    e.reset(seed=1)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
        e.step(action)

Agents ``player_0`` ... ``player_{N-1}`` in seat order; the agent selected is the one who
decides next (the mover after a roll that leaves a choice: the same agent decides again
and again within its turn). The observation is a dict, ``observation`` (the vector of
:class:`thousand.analysis.observation.Encoding`, from the observing agent's seat) and
``action_mask`` (int8); the action a number of that encoding. The reward is +1 to the
winner when the game ends (a top shared under equal turns by k players: 1/k each), 0
otherwise; a game that lasts :data:`thousand.engine.MAX_TURNS` turns is truncated. As in
PettingZoo's classic games, :func:`env` wraps the raw environment so that an illegal
action ends the game with -1 to its player.
"""

from __future__ import annotations

import random

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from thousand.analysis.observation import Encoding

from .match import Match, ruleset_of

__all__ = ["env", "raw_env"]


def env(**kwargs):
    """:class:`raw_env` in PettingZoo's wrappers for classic games (an illegal action ends
    the game with -1 to its player; out-of-bounds actions and calls out of order raise)."""
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's convention names the class so
    """``rules``: a preset name, a TOML file or a Ruleset; ``overrides``: ``--set`` strings;
    ``players``: the number of seats; ``render_mode``: None or ``"ansi"``."""

    metadata = {"render_modes": ["ansi"], "name": "thousand_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, rules="pig", players: int = 2, overrides=(), render_mode: str | None = None):
        super().__init__()
        self.rs = ruleset_of(rules, overrides)
        self.n = int(players)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{k}" for k in range(self.n)]
        self.agents = self.possible_agents[:]
        self.encoding = enc = Encoding(self.rs, self.n)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(enc.low, enc.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(enc.n_actions,), dtype=np.int8),
            }
        )
        self._obs_space = {a: obs_space for a in self.possible_agents}
        self._act_space = {a: spaces.Discrete(enc.n_actions) for a in self.possible_agents}
        self._rng = random.Random()
        self.match: Match | None = None

    def observation_space(self, agent):
        return self._obs_space[agent]

    def action_space(self, agent):
        return self._act_space[agent]

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = random.Random(seed)
        self.match = Match(self.rs, self.n, self._rng)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._settle()

    def _settle(self) -> None:
        """Select the agent who decides next, or end the game for everyone."""
        m = self.match
        if m.over:
            for k, a in enumerate(self.possible_agents):
                self.rewards[a] = m.rewards()[k]
                self.terminations[a] = m.winners is not None
                self.truncations[a] = m.truncated
        self.agent_selection = self.possible_agents[m.mover]

    def observe(self, agent):
        k = self.possible_agents.index(agent)
        mask = self.match.mask() if k == self.match.mover else np.zeros(self.encoding.n_actions, dtype=np.int8)
        return {"observation": self.match.observe(k), "action_mask": mask}

    def step(self, action):
        a = self.agent_selection
        if self.terminations[a] or self.truncations[a]:
            self._was_dead_step(action)
            return
        legal = self.match.legal
        chosen = self.encoding.action(action, legal)
        if chosen is None:
            raise ValueError(f"action {action!r} is not marked in {a}'s action mask")
        self._cumulative_rewards[a] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.match.act(chosen)
        self._settle()
        self._accumulate_rewards()

    def render(self):
        """The game in one line of text: every player's score, the mover's turn and roll."""
        if self.render_mode is None:
            return None
        m = self.match
        scores = ", ".join(f"{a}: {x.score}" for a, x in zip(self.possible_agents, m.players_now))
        if m.over:
            who = ", ".join(self.possible_agents[w] for w in m.winners or ())
            return f"{scores}; over" + (f", won by {who}" if who else " (truncated)")
        s = m.turn
        return f"{scores}; {self.possible_agents[m.mover]} has {s.total} in the turn, roll {','.join(map(str, s.roll))}"

    def close(self):
        pass
