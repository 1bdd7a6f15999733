"""Random games of the scorekeeper for the page's rules twin (``static/rules.js``): the log
of a game played at random through :class:`thousand.play.game.Game`, with a few entries
the rules refuse mixed in, and the state after every entry as ``rules.js``'s
``Game.snapshot`` gives it, computed here by the Python engine."""

from __future__ import annotations

import random

from tiny import TINY_DUELS, TINY_EQUAL_TURNS

from thousand.base.errors import ThousandError
from thousand.play.game import Game
from thousand.rules import from_mapping
from thousand.rules.ruleset import load_ruleset, preset_names

FIELDS = ("score", "opened", "bolts", "pit_tries", "pit_entry", "barrel_tries", "barrel_entry", "falls", "overshoots")

# presets changed where the presets leave a rule unused: pit attempts, a fall back to the
# barrel's entry score with a limit on falls, consecutive bolts, the exact barrel's falls
VARIANTS = {
    "classic-pit-tries": ("classic", ("pit_attempts=2", 'barrel.fall_to="entry"', "barrel.max_falls=2")),
    "classic-consecutive": ("classic-nobarrel", ("bolts.consecutive=true", "bolts.exempt=[]")),
    "classic-open-falls": ("classic-open", ("barrel.max_falls=2",)),
    "street-short": ("street", ("goal=300", "pits=[{low=100, exit=150}]", "dump=[255]")),
}


def rulesets() -> dict:
    """Every ruleset the twin is held to: the 1000-family presets, the variants above and
    the tiny rulesets of the duel tests (whose endgames a random game reaches)."""
    out = {name: load_ruleset(name) for name in preset_names() if name != "poker"}
    out.update({name: load_ruleset(base, over) for name, (base, over) in VARIANTS.items()})
    out.update({name: from_mapping(m) for name, m in {**TINY_DUELS, **TINY_EQUAL_TURNS}.items()})
    return out


def snapshot(g: Game) -> dict:
    """What ``rules.js``'s ``Game.snapshot`` says of the same game."""
    tr = g.turn
    return {
        "players": [[int(getattr(x, f)) for f in FIELDS] for x in g.states],
        "finished": [[j, t] for j, t in sorted(g.finished.items())],
        "current": g.current,
        "round": g.round,
        "winners": list(g.winners) if g.winners is not None else None,
        "turn": None
        if g.over
        else {
            "total": tr.total,
            "dice": tr.dice,
            "roll": list(tr.roll) if tr.roll else None,
            "options": [[p, list(d)] for p, d in tr.options],
            "can_stop": g.engine.can_stop(tr.state),
            "compulsory": tr.compulsory,
        },
    }


def random_game(rs, players: int, seed: int, boldness: float, entries: int) -> tuple[list[str], list[dict]]:
    """A game played at random (``boldness``: the chance of rolling on where stopping is
    allowed), about one entry in twelve one the rules refuse: its log as sent (refused
    entries included) and the state after each entry (``{"refused": True}`` for a refusal)."""
    rnd = random.Random(seed)
    g = Game(rs, [f"p{k}" for k in range(players)])
    log, states = [], []

    def faces(n):
        return ",".join(str(rnd.randint(1, rs.faces)) for _k in range(n))

    for _k in range(entries):
        if g.over:  # one entry after the end, refused
            log.append("stop")
            try:
                g.submit("stop")
            except ThousandError:
                states.append({"refused": True})
            break
        tr = g.turn
        wrong = rnd.random() < 1 / 12
        if wrong:
            entry = rnd.choice(
                [
                    f"roll {faces(max(1, tr.dice - 1) if tr.dice > 1 else 2)}",
                    f"keep {faces(rnd.randint(1, rs.dice))}",
                    "stop",
                    f"roll {faces(tr.dice)}",
                    "keep",
                ]
            )
        elif tr.roll is not None:
            opts = tr.options
            entry = "keep" if rnd.random() < 0.2 else "keep " + ",".join(map(str, rnd.choice(opts)[1]))
        elif g.engine.can_stop(tr.state) and rnd.random() > boldness:
            entry = "stop"
        else:
            entry = f"roll {faces(tr.dice)}"
        log.append(entry)
        try:
            g.submit(entry)
        except ThousandError:
            states.append({"refused": True})
            continue
        states.append(snapshot(g))
    return log, states
