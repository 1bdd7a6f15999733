"""Poker-dice bots: what a bot sees and answers, the built-in bots, and games between bots.

A bot is asked after every throw but the last: it sees a :class:`PokerBotState` (its
five dice, the throw number, the dice it may re-roll, the best hand so far with its
holders, how many play after it) and answers the dice to re-roll (``[]`` or ``"stop"``
keeps the hand). The Python and JSON-lines bot machinery is the 1000 one
(:mod:`thousand.analysis.bots`); only the decision and its checks differ.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from thousand.base.errors import BotError
from thousand.base.i18n import _
from thousand.engine.poker import KEEPS, _minus, _submultisets, turn_shape
from thousand.rules.poker import PokerRuleset
from thousand.solvers.poker_advice import Situation

from .bots import Bot, ProcessBot, PythonBot, _fault, _short, load_python_object

__all__ = [
    "BUILTINS",
    "GreedyBot",
    "OptimalPokerBot",
    "PokerBotState",
    "RandomPokerBot",
    "StopBot",
    "load_poker_bot",
    "play_game",
    "play_turn",
]

BUILTINS = ("optimal", "stop", "greedy", "random")


@dataclass(frozen=True)
class PokerBotState:
    """One decision: ``dice`` (sorted) after throw ``throw`` of ``ruleset.rolls``,
    ``rerollable`` (the dice the lock rule leaves free), ``to_beat`` (the dice of the best
    hand so far, None for the first player), ``holders`` of it and ``after`` (players
    still to play after this one)."""

    ruleset: PokerRuleset
    dice: tuple[int, ...]
    throw: int
    rerollable: tuple[int, ...]
    to_beat: tuple[int, ...] | None
    holders: int
    after: int

    @property
    def situation(self) -> Situation:
        hands = self.ruleset.hands
        return Situation(None if self.to_beat is None else hands.strength(self.to_beat), self.holders, self.after)

    def key(self) -> tuple:
        s = self.situation
        return (s.best, s.holders, s.after, self.dice, self.throw, self.rerollable)

    def options(self) -> list[tuple[int, ...]]:
        """Every legal answer: () (stop) and each non-empty part of the re-rollable dice."""
        return [()] + [
            _minus(self.rerollable, y) for y in _submultisets(self.rerollable) if len(y) < len(self.rerollable)
        ]

    def to_json(self) -> dict:
        hands = self.ruleset.hands
        return {
            "dice": list(self.dice),
            "throw": self.throw,
            "rolls": self.ruleset.rolls,
            "rerollable": list(self.rerollable),
            "hand": hands.describe(hands.strength(self.dice)),
            "to_beat": list(self.to_beat) if self.to_beat else None,
            "to_beat_hand": hands.describe(hands.strength(self.to_beat)) if self.to_beat else None,
            "holders": self.holders,
            "after": self.after,
        }

    def coerce(self, answer: Any) -> tuple[int, ...]:
        """A bot's answer as the sorted dice to re-roll (() = stop), or a counted fault.

        Accepted: ``"stop"``, None or ``[]``; a list of faces to re-roll; a dict
        ``{"reroll": [...]}`` or ``{"keep": [...]}`` (the dice kept, locked ones included)."""
        if answer is None or answer == "stop":
            return ()
        if isinstance(answer, dict):
            if "reroll" in answer:
                faces = answer["reroll"]
            elif "keep" in answer:
                try:
                    keep = [int(v) for v in answer["keep"]]
                except (TypeError, ValueError):
                    raise _fault("malformed", f"answer {_short(answer)}: 'keep' must be a list of faces") from None
                if Counter(keep) - Counter(self.dice):
                    raise _fault("illegal", f"keep {keep}: not among the dice {list(self.dice)}")
                faces = list((Counter(self.dice) - Counter(keep)).elements())
            else:
                raise _fault("malformed", f"answer {_short(answer)} names neither 'reroll' nor 'keep'")
        elif isinstance(answer, (list, tuple)):
            faces = answer
        else:
            raise _fault("malformed", f"answer {_short(answer)} is not a list of dice to re-roll")
        try:
            faces = tuple(sorted(int(v) for v in faces))
        except (TypeError, ValueError):
            raise _fault("malformed", f"answer {_short(answer)}: the dice must be faces 1 to 6") from None
        if Counter(faces) - Counter(self.rerollable):
            raise _fault(
                "illegal",
                f"re-roll {list(faces)}: the dice that may be re-rolled are "
                f"{list(self.rerollable)} (of {list(self.dice)})",
            )
        return faces

    def fallback(self) -> tuple[int, ...]:
        return ()  # a faulty answer keeps the hand

    def check_reply(self, reply: dict) -> None:
        if "reroll" not in reply and "keep" not in reply:
            raise _fault("malformed", f'an answer needs "reroll" (or "keep"): {_short(reply)}')


# --------------------------------------------------------------------------- built-in bots


class OptimalPokerBot(Bot):
    """The equilibrium player: the solved turn of its situation (cached per situation)."""

    name = "optimal"

    def __init__(self, solution):
        super().__init__()
        self.sol = solution
        self.shape = turn_shape(solution.rs.lock_kept)
        self._turns: dict = {}

    def turn_for(self, s: Situation):
        key = (s.best, s.holders, s.after)
        if key not in self._turns:
            if len(self._turns) > 4096:
                self._turns.clear()
            self._turns[key] = self.sol.turn(s.best, s.holders, s.remaining)
        return self._turns[key]

    def decide(self, state: PokerBotState) -> tuple[int, ...]:
        t = self.turn_for(state.situation)
        locked = _minus(state.dice, state.rerollable)
        a = int(t.action[state.throw][0, self.shape.state_of(locked, state.rerollable)])
        return () if a < 0 else _minus(state.dice, KEEPS[a])


class StopBot(Bot):
    """Keeps the first throw (never re-rolls)."""

    name = "stop"

    def decide(self, state):
        return ()


class GreedyBot(Bot):
    """Keeps the dice that make its hand (its groups of equal faces) and re-rolls the rest,
    until it holds a straight, a full house or better; a common table heuristic."""

    name = "greedy"

    def decide(self, state):
        h = state.ruleset.hand(state.dice)
        if h.category >= 4:
            return ()
        count = Counter(state.dice)
        making = [f for f, c in count.items() if c >= 2]
        loose = [f for f in state.dice if f not in making]
        if not making:  # nothing: keep the highest die
            loose = sorted(state.dice)[:-1]
        return state.coerce([f for f in loose if f in state.rerollable][: len(state.rerollable)])


class RandomPokerBot(Bot):
    """A uniformly random legal answer (seeded)."""

    name = "random"
    deterministic = False

    def __init__(self, seed: int = 0):
        super().__init__()
        self.rng = random.Random(seed)

    def decide(self, state):
        return self.rng.choice(state.options())


def load_poker_bot(spec: str, rs: PokerRuleset, solution, seed: int = 0, timeout: float = 2.0) -> Bot:
    """A poker bot from its spec: ``optimal``, ``stop``, ``greedy``, ``random[:SEED]``,
    ``exec:COMMAND`` (JSON lines) or ``module:attr`` / ``path/to/file.py:attr``."""
    spec = spec.strip()
    if spec == "optimal":
        return OptimalPokerBot(solution)
    if spec == "stop":
        return StopBot()
    if spec == "greedy":
        return GreedyBot()
    if spec == "random" or spec.startswith("random:"):
        try:
            s = int(spec[7:]) if spec.startswith("random:") else seed
        except ValueError:
            raise BotError(_("bot {0!r}: random:SEED needs a whole number").format(spec)) from None
        return RandomPokerBot(s)
    if spec.startswith("exec:"):
        return ProcessBot(spec[5:].strip(), rs, "poker", timeout=timeout)
    from .bots import is_builtin

    if is_builtin(spec):
        raise BotError(
            _(
                "bot {0!r} is a bot of the 1000 family; the poker-dice bots are {1}, exec:COMMAND, "
                "module:attr or path/to/file.py:attr"
            ).format(spec, ", ".join(BUILTINS))
        )
    if ":" in spec:
        return PythonBot(load_python_object(spec), spec, timeout=timeout)
    raise BotError(
        _("unknown poker bot {0!r}: use one of {1}, exec:COMMAND, module:attr or path/to/file.py:attr").format(
            spec, ", ".join(BUILTINS)
        )
    )


# --------------------------------------------------------------------------- games between bots


def play_turn(rs: PokerRuleset, bot: Bot, to_beat, holders: int, after: int, rng: random.Random) -> tuple[int, ...]:
    """One turn of ``bot`` with real (pseudo-random) dice; returns the final dice."""
    dice = tuple(sorted(rng.randint(1, 6) for _ in range(5)))
    free = dice
    for throw in range(1, rs.rolls):
        st = PokerBotState(rs, dice, throw, free, to_beat, holders, after)
        reroll = bot.choose(st)
        if not reroll:
            break
        new = tuple(rng.randint(1, 6) for _ in reroll)
        dice = tuple(sorted(_minus(dice, reroll) + new))
        free = tuple(sorted(new)) if rs.lock_kept else dice
    return dice


def play_game(rs: PokerRuleset, bots: list[Bot], rng: random.Random) -> int:
    """A whole game (replays included) between ``bots`` in seat order; the winner's seat."""
    hands = rs.hands
    seats = list(range(len(bots)))
    while True:
        best, best_dice, holders = None, None, 0
        results = {}
        for k, s in enumerate(seats):
            d = play_turn(rs, bots[s], best_dice, holders, len(seats) - k - 1, rng)
            st = hands.strength(d)
            results[s] = st
            if best is None or st > best:
                best, best_dice, holders = st, d, 1
            elif st == best:
                holders += 1
        tied = [s for s in seats if results[s] == best]
        if len(tied) == 1:
            return tied[0]
        seats = tied
