"""OpenSpiel bots as their authors write them (pyspiel.Bot), for `--bot openspiel:...`."""

import re

import pyspiel


class HoldAt(pyspiel.Bot):
    """Pig's hold-at-n: stop once the turn total reaches n or the stop wins."""

    def __init__(self, game, player_id, n=20):
        pyspiel.Bot.__init__(self)
        self.n, self.goal = n, game.get_parameters()["winscore"]
        self.player_id = player_id

    def step(self, state):
        a, b, total, player = (int(x) for x in re.findall(r"-?\d+", str(state))[:4])
        score = (a, b)[player]
        return 1 if total >= self.n or score + total >= self.goal else 0

    def restart_at(self, state):
        pass


def hold20(game, player_id):
    return HoldAt(game, player_id, 20)


def hold10(game, player_id):
    return HoldAt(game, player_id, 10)


def stubborn(game, player_id):
    """Answers an action that is no action."""

    class Stubborn(pyspiel.Bot):
        def __init__(self):
            pyspiel.Bot.__init__(self)

        def step(self, state):
            return 7

    return Stubborn()
