"""Policies as the reinforcement-learning world writes them: a callable on (observation,
mask) returning an action number (docs/bots.md, "Bots from reinforcement learning"),
written against the documented layout for two players of Pig, not against thousand."""

import numpy as np

# two players: 9 fields each, then mover, turn_total, dice_thrown, roll.1 ... roll.6, hot, seat, to_beat
SCORE, TURN_TOTAL, ROLL = 0, 19, 21


def hold20(observation, mask):
    """Pig's hold-at-20: stop once the turn total after this die reaches 20, or banking wins
    (goal 100); the action number of "keep f" is 2 (f - 1), of "keep f, stop" one more."""
    face = int(np.flatnonzero(observation[ROLL : ROLL + 6])[0]) + 1
    total = observation[TURN_TOTAL] + face
    stop = total >= 20 or observation[SCORE] + total >= 100
    return 2 * (face - 1) + (1 if stop else 0)


def illegal(observation, mask):
    """Always an action outside the mask."""
    return int(np.flatnonzero(mask == 0)[0])


def one_argument(observation):
    return 0
