"""The exact optimal policy of OpenSpiel's ``pig`` as an OpenSpiel ``Policy``.

    import pyspiel
    from thousand.env.openspiel import PigPolicy
    game = pyspiel.load_game("pig", {"winscore": 100})
    policy = PigPolicy(game)                 # both players; the duel table of pig to 100
    policy.action_probabilities(state)       # {0: 1.0} (roll) or {1: 1.0} (stop)

The policy plays the duel table's best action (:mod:`thousand.analysis.openspiel` says how
OpenSpiel's pig is read, and why its pass and its forced stop change no value).
:func:`play_along` plays games in OpenSpiel and, with the same dice, in this project's
rules, and counts where the two disagree.
"""

from __future__ import annotations

import random

from open_spiel.python import policy as os_policy

from thousand.analysis.openspiel import ROLL, STOP, pig_rules, read_pig
from thousand.engine.player import PlayerState
from thousand.engine.turn import TurnEnd, TurnRules
from thousand.storage.solve import solve_objective

__all__ = ["PigPolicy", "play_along"]


class PigPolicy(os_policy.Policy):
    """The duel-optimal player of OpenSpiel's pig, for both players (``tables``: where the
    duel table is found or written)."""

    def __init__(self, game, tables: str | None = None):
        super().__init__(game, list(range(game.num_players())))
        self.rs = pig_rules(game)
        self.solution = solve_objective(self.rs, "duel", tables, progress=False)
        self._best: dict = {}

    def best_action(self, scores: tuple[int, int], total: int, player: int) -> int:
        """Roll (0) or stop (1) for ``player`` at these scores and turn total."""
        key = (scores, total, player)
        a = self._best.get(key)
        if a is None:
            me, opp = scores[player], scores[1 - player]
            if total == 0:
                a = ROLL  # a pass is never better than a roll
            elif me + total >= self.rs.goal:
                a = STOP  # the stop wins
            else:
                advice = self.solution.advise(PlayerState(me), PlayerState(opp), turn=total)
                a = ROLL if advice.best.action == "roll" else STOP
            self._best[key] = a
        return a

    def action_probabilities(self, state, player_id=None):
        scores, total, player = read_pig(state)
        return {self.best_action(scores, total, player): 1.0}


def play_along(game, games: int = 200, seed: int = 0, explore: float = 0.3, tables: str | None = None) -> dict:
    """``games`` games of OpenSpiel's pig, the chance outcomes drawn here and fed to this
    project's rules as well (the face ``k + 1``): at each decision the legal actions must
    agree (roll and stop both, or only the stop once the goal is reached), and at the end
    the winner and the returns (+1 / -1). The players follow :class:`PigPolicy`, or with
    probability ``explore`` a random legal action (never a pass, which Pig's rules here do
    not have; ``tables``: where its duel table is found or written). Returns the counts of
    decisions, games and disagreements."""
    rng = random.Random(seed)
    rs = pig_rules(game)
    engine = TurnRules(rs)
    policy = PigPolicy(game, tables)
    out = {"games": 0, "decisions": 0, "legal_differ": 0, "winner_differ": 0, "returns_differ": 0}
    for _g in range(games):
        s = game.new_initial_state()
        players = [engine.moves.initial()] * 2
        turn = None  # this project's turn in play, its roll showing at a decision
        winner = None
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                k = rng.choices([o for o, _p in outcomes], [p for _o, p in outcomes])[0]
                s.apply_action(k)
                r = engine.after_roll(turn, [k + 1])
                if isinstance(r, TurnEnd):  # a 1: the turn passes, nothing banked
                    turn = None
                else:
                    turn = r
                continue
            scores, total, p = read_pig(s)
            if turn is None:  # the turn starts with a roll
                turn = engine.start(players[p])
                s.apply_action(ROLL)
                continue
            out["decisions"] += 1
            legal = engine.legal(turn)
            ours = sorted({ROLL if a.roll else STOP for a in legal})
            theirs = sorted(s.legal_actions())
            if ours != theirs and not (theirs == [STOP] and players[p].score + total >= rs.goal):
                out["legal_differ"] += 1
            a = rng.choice(theirs) if rng.random() < explore else policy.best_action(scores, total, p)
            s.apply_action(a)
            nxt = engine.apply(turn, next(x for x in legal if x.roll == (a == ROLL)))
            if isinstance(nxt, TurnEnd):
                banked = players[p].score + nxt.total
                if banked >= rs.goal:
                    winner = p
                players[p] = players[p]._replace(score=min(banked, rs.goal))
                turn = None
            else:
                turn = nxt
        out["games"] += 1
        returns = s.returns()
        if winner is None or max(range(2), key=lambda q: returns[q]) != winner:
            out["winner_differ"] += 1
        if winner is not None and list(returns) != [1.0 if q == winner else -1.0 for q in range(2)]:
            out["returns_differ"] += 1
    return out
