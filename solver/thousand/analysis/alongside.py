"""An approximation's decisions beside the equilibrium's, along equilibrium play.

Games are played with every seat making the equilibrium's decisions
(:class:`thousand.analysis.oracle.EquilibriumOracle`, the dice thrown by a seeded
generator). At every decision where the rules leave a choice, each approximation is asked
what it would do, and its choice is valued by the equilibrium: the mover's chance to win
after the equilibrium's action minus its chance after the approximation's,

    loss(d) = max_a Q_eq(d, a) - Q_eq(d, a_approx(d)),

with the other players going on by the equilibrium. A decision counts as chosen
differently where ``loss(d) > 1e-12`` (another action of equal value is the same choice).
The share of such decisions is a proportion over the decisions met (a decision met in
several games counts each time), with its 95% Wilson interval; the mean and the largest
loss are over the decisions chosen differently. The whole-game cost of one player using an
approximation is measured exactly elsewhere (:func:`thousand.solvers.profile.evaluate_profile`);
this says where that cost comes from: how often the approximation disagrees, and by how
much when it does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from thousand.engine.turn import TurnRules

from .bots import Bot, BotState
from .montecarlo import play_game, play_turn, wilson
from .oracle import EquilibriumOracle, _ActionValues, _option_values, kept_turn

__all__ = ["AdvisorValues", "Disagreements", "along_equilibrium"]

DIFFERENT = 1e-12  # a loss above this is a different choice


class AdvisorValues(_ActionValues):
    """The values an approximation gives each legal action: the turn advisor that
    ``make(me, opponents)`` builds for the mover ``me`` against ``opponents`` (in the order
    they move next), kept per ``key(me, opponents)`` (by default the opponents: most
    advisors do not depend on the mover), each turn solved once per mover state (both kept
    up to ``keep`` entries)."""

    def __init__(self, make, key=None, keep: int = 20_000):
        self.make, self.keep = make, keep
        self.key = key or (lambda me, opponents: opponents)
        self._adv: dict = {}
        self._turn: dict = {}

    def values(self, state: BotState) -> list[float]:
        k = self.key(state.me, state.opponents)
        adv = self._adv.get(k)
        if adv is None:
            if len(self._adv) >= self.keep:
                self._adv.clear()
            adv = self._adv[k] = self.make(state.me, state.opponents)
            self.higher = adv.higher  # a race's expected turns: fewer is better
        solved = kept_turn(self._turn, self.keep, (state.me, state.opponents), adv, state.me)
        return _option_values(adv, solved, state)


@dataclass
class Disagreements:
    """One approximation's decisions along equilibrium play (the module docstring)."""

    decisions: int = 0
    different: int = 0
    total_loss: float = 0.0
    largest: float = 0.0

    def record(self, lost: float) -> None:
        self.decisions += 1
        if lost > DIFFERENT:
            self.different += 1
            self.total_loss += lost
            self.largest = max(self.largest, lost)

    @property
    def share(self) -> float:
        return self.different / self.decisions if self.decisions else 0.0

    @property
    def mean_loss(self) -> float:
        return self.total_loss / self.different if self.different else 0.0

    def to_json(self) -> dict:
        lo, hi = wilson(self.different, self.decisions)
        return {
            "decisions": self.decisions,
            "different": self.different,
            "share": self.share,
            "share_ci95": [lo, hi],
            "mean_loss": self.mean_loss,
            "largest_loss": self.largest,
        }


class _Equilibrium(Bot):
    """Plays the equilibrium's best action, keeping the values of the last decision for
    the comparison that follows it."""

    name = "equilibrium"

    def __init__(self, oracle: EquilibriumOracle):
        super().__init__()
        self.oracle = oracle
        self.last: tuple = (None, [])

    def decide(self, state: BotState):
        vals = self.oracle.values(state)
        self.last = (state, vals)
        return state.legal[self.oracle.best_index(vals)]


def along_equilibrium(table, methods: dict, games: int, seed: int = 1) -> tuple[dict, int]:
    """``games`` games of equilibrium play of the N-player table ``table``
    (:class:`thousand.storage.PlayersSolution`, without ``equal_turns``); every decision
    met is put to each of ``methods`` (name -> :class:`AdvisorValues`). Returns
    ({name: :class:`Disagreements`}, the games that ended)."""
    rs, N = table.rs, table.players
    if rs.equal_turns:
        raise ValueError("decisions along equilibrium play are compared for games that end at the first win")
    oracle = EquilibriumOracle(table)
    engine = TurnRules(rs)
    rng = random.Random(seed)
    bot = _Equilibrium(oracle)
    out = {name: Disagreements() for name in methods}

    def compare(state: BotState, action) -> None:
        seen, vals = bot.last
        if seen is not state:
            vals = oracle.values(state)
        best = max(vals)
        for name, m in methods.items():
            out[name].record(best - vals[state.legal.index(m.best(state))])

    def turn(mover, states, seat, to_beat, tied):
        opp = [states[(mover + j) % N] for j in range(1, N)]
        return play_turn(engine, rng, bot, states[mover], opp[0], on_decision=compare, others=tuple(opp[1:]))

    ended = sum(play_game(engine, N, turn) is not None for _ in range(games))
    return out, ended
