"""Tiny rulesets (two dice, goal 25-30) that exercise the interaction rules; shared by
the duel and simulator tests, with their duel solutions solved once per session."""

PAIR_SCORING = {"singles": {"1": 10, "5": 5}, "kinds": {"2": {"1": 25, "5": 15}}}

TINY_DUELS = {
    "pig-10": {
        "dice": 1,
        "hot_dice": "free",
        "goal": 10,
        "scoring": {"singles": {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6}},
    },
    "overtaking-bolts": {
        "dice": 2,
        "goal": 30,
        "scoring": PAIR_SCORING,
        "overtake": 10,
        "bolts": {"limit": 2, "penalty": 10},
    },
    "barrel-push-off": {
        "dice": 2,
        "goal": 30,
        "keep": "any",
        "scoring": PAIR_SCORING,
        "barrel": {"kind": "points", "threshold": 20, "attempts": 2, "fall_penalty": 10, "push_off": "fall"},
    },
    "dump-opening": {
        "dice": 2,
        "goal": 30,
        "open_min": 10,
        "scoring": PAIR_SCORING,
        "dump": [15],
        "dump_mid_turn": True,
        "overtake": 5,
    },
    "region-penalty-push": {
        "dice": 2,
        "goal": 25,
        "scoring": PAIR_SCORING,
        "overtake": 5,
        "barrel": {"kind": "region", "threshold": 15, "push_off": "penalty", "push_off_penalty": 5},
    },
    # admission's shape: a confirming roll, an opening, a points barrel without an attempt
    # limit whose push-off sends the other back to the opening score -- every penalty
    # lands on one pair (the duel's interface, DuelModel.interface)
    "barrel-open-min": {
        "dice": 2,
        "goal": 30,
        "keep": "any",
        "hot_dice": "confirm",
        "open_min": 10,
        "scoring": PAIR_SCORING,
        "barrel": {"kind": "points", "threshold": 20, "attempts": 0, "push_off": "open_min"},
    },
}

# equal_turns (docs/rules.md section 7): the second seat gets a last turn after a first-seat win.
# Scores above the goal count (a points barrel's winning bank is not capped), ties are 1/2.
TINY_EQUAL_TURNS = {
    # one die, no barrel: a final total can run far past the goal, and ties are common
    "equal-pig-like": {
        "dice": 1,
        "hot_dice": "free",
        "goal": 20,
        "equal_turns": True,
        "scoring": {"singles": {"4": 5, "5": 5, "6": 10}},
    },
    # both players can sit on a points barrel (no push-off): the second seat's last
    # turn is played from the barrel against a final total above the goal
    "equal-barrel": {
        "dice": 2,
        "goal": 30,
        "keep": "any",
        "scoring": PAIR_SCORING,
        "equal_turns": True,
        "barrel": {"kind": "points", "threshold": 20, "attempts": 2, "fall_penalty": 10, "push_off": "none"},
    },
    # an exact barrel: every final total is the goal, so the last turn can only tie
    "equal-exact": {
        "dice": 2,
        "goal": 25,
        "scoring": PAIR_SCORING,
        "equal_turns": True,
        "barrel": {"kind": "exact", "overshoots": 2, "fall_penalty": 10, "max_falls": 1},
    },
    # penalties between the seats: overtaking and bolts
    "equal-overtaking-bolts": {
        "dice": 2,
        "goal": 20,
        "scoring": PAIR_SCORING,
        "overtake": 10,
        "equal_turns": True,
        "bolts": {"limit": 2, "penalty": 10},
    },
}

_SOLVED: dict = {}


def solved(rulesets: dict, name: str):
    """(ruleset, duel solution) of ``rulesets[name]``, solved once per test session."""
    from thousand.rules import from_mapping
    from thousand.solvers.duel import solve_duel

    key = (id(rulesets), name)
    if key not in _SOLVED:
        rs = from_mapping(rulesets[name])
        _SOLVED[key] = (rs, solve_duel(rs))
    return _SOLVED[key]
