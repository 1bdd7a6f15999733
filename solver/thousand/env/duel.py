"""The Gymnasium environment ``thousand/Duel-v0``: one agent against bots.

    import gymnasium, thousand.env                 # importing thousand.env registers it
    e = gymnasium.make("thousand/Duel-v0", rules="pig", opponent="hold:20")
    obs, info = e.reset(seed=1)
    obs, reward, terminated, truncated, info = e.step(action)

The agent sits in ``seat`` (``"first"``, ``"second"``, ... or ``"random"``: drawn each
game) among ``players`` seats; every other seat is played by ``opponent``: ``"optimal"``
(the duel table: exact best play; among three players or more the equilibrium's
advice), ``"race"``, ``"hold:N"``, ``"cautious"``, ``"random"`` or any bot spec
``thousand evaluate`` takes (docs/bots.md). Observation and action as the PettingZoo
environment's (:mod:`thousand.env.aec`): a dict of the ``observation`` vector and the
``action_mask``, the mask also in ``info["action_mask"]``. Each step is one decision of the
agent; the opponents' turns are played before the next one. Reward +1 when the agent wins
(1/k for a top shared by k), 0 when it loses; an action outside the mask ends the game
with -1. A game can end before the agent's first decision (the opponents win while every
roll of the agent scores nothing): then the mask at reset is all zero, and the first step,
whatever its action, ends the episode with the agent's reward, so that no game is left out.
"""

from __future__ import annotations

import random

import gymnasium
import numpy as np
from gymnasium import spaces

from thousand.analysis.bots import load_bot
from thousand.analysis.observation import Encoding
from thousand.base.choices import SEATS
from thousand.base.errors import BotError

from .match import Match, ruleset_of

__all__ = ["DuelEnv", "register"]

ENV_ID = "thousand/Duel-v0"


class DuelEnv(gymnasium.Env):
    """``rules``, ``overrides``: the ruleset; ``opponent``: the bot spec of every other seat;
    ``players``: the seats; ``seat``: the agent's; ``tables``: where the tables are."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        rules="pig",
        opponent: str = "optimal",
        players: int = 2,
        seat: str | int = "random",
        overrides=(),
        tables: str | None = None,
        render_mode: str | None = None,
    ):
        self.rs = ruleset_of(rules, overrides)
        self.n = int(players)
        self.seat_spec = seat
        if not (seat == "random" or (isinstance(seat, int) and 0 <= seat < self.n) or seat in SEATS[: self.n]):
            raise BotError(f"seat {seat!r}: one of {', '.join(SEATS[: self.n])}, random, or 0 to {self.n - 1}")
        self.render_mode = render_mode
        self.opponent_spec = opponent
        self.opponent = load_bot(opponent, self.rs, "duel", tables, players=self.n)
        self.encoding = Encoding(self.rs, self.n)
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(self.encoding.low, self.encoding.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.encoding.n_actions,), dtype=np.int8),
            }
        )
        self.action_space = spaces.Discrete(self.encoding.n_actions)
        self._dice = random.Random()
        self.match: Match | None = None
        self.seat = 0

    def _obs(self):
        mask = self.match.mask() if not self.match.over else np.zeros(self.encoding.n_actions, dtype=np.int8)
        return {"observation": self.match.observe(self.seat), "action_mask": mask}, {"action_mask": mask}

    def _play_others(self) -> None:
        """The opponents decide until the agent's next decision or the end of the game."""
        m = self.match
        while not m.over and m.mover != self.seat:
            m.act(self.opponent.choose(m.bot_state()))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        # the dice and the seat draw come from the seeded generator of gymnasium's reset
        self._dice = random.Random(int(self.np_random.integers(2**63)))
        if self.seat_spec == "random":
            self.seat = int(self.np_random.integers(self.n))
        else:
            self.seat = self.seat_spec if isinstance(self.seat_spec, int) else SEATS.index(self.seat_spec)
        self.opponent.new_game()
        self.match = Match(self.rs, self.n, self._dice)
        self._play_others()
        obs, info = self._obs()
        return obs, {**info, "seat": self.seat}

    def step(self, action):
        m = self.match
        if m.over:
            # the game ended before the agent's first decision (its every roll scored
            # nothing while the opponents won): this step, whatever its action, reports it
            obs, info = self._obs()
            return obs, m.rewards()[self.seat], m.winners is not None, m.truncated, info
        chosen = self.encoding.action(action, m.legal)
        if chosen is None:  # outside the mask: the game is lost
            obs, info = self._obs()
            return obs, -1.0, True, False, {**info, "illegal": True}
        m.act(chosen)
        self._play_others()
        obs, info = self._obs()
        reward = m.rewards()[self.seat] if m.over else 0.0
        return obs, reward, m.winners is not None, m.truncated, info

    def render(self):
        if self.render_mode is None:
            return None
        m = self.match
        scores = ", ".join(f"seat {k + 1}: {x.score}" for k, x in enumerate(m.players_now))
        if m.over:
            return f"{scores}; over"
        return f"{scores}; you have {m.turn.total} in the turn, roll {','.join(map(str, m.turn.roll))}"

    def close(self):
        self.opponent.close()


def register() -> None:
    """Register ``thousand/Duel-v0`` with Gymnasium (once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="thousand.env.duel:DuelEnv")
