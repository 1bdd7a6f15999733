"""Python bots for the tests: loaded as tests/bots/pybots.py:NAME."""

from thousand.analysis.bots import Action


class Hold:
    """Hold at 10, or when banking wins: the same play as the built-in hold:10."""

    def decide(self, state):
        first = state.legal[0]
        same = [a for a in state.legal if a.keep == first.keep]
        stop = [a for a in same if not a.roll]
        t = state.turn_total + first.points
        if stop and (t >= 10 or state.me.score + t >= state.ruleset.goal):
            return stop[0]
        return [a for a in same if a.roll][0] if [a for a in same if a.roll] else same[0]


def greedy(state):
    """A plain function: always roll on, with the dice of the first set-aside."""
    return {"keep": list(state.legal[0].keep), "then": "roll"}


class Raises:
    def decide(self, state):
        raise RuntimeError("boom")


class Garbage:
    def decide(self, state):
        return 42


class Illegal:
    def decide(self, state):
        return Action((7,), True)


class Broken:
    def __init__(self):
        raise ValueError("cannot build")


not_a_bot = 3


class Hangs:
    """A bot that never answers (a loop without end)."""

    def decide(self, state):
        n = 0
        while True:
            n += 1
