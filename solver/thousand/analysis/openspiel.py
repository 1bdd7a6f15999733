"""OpenSpiel's Pig as this project reads it, and OpenSpiel bots as bots here
(``thousand evaluate pig --bot openspiel:MODULE:ATTR``; ``pip install 'thousand[rl]'``).

OpenSpiel's ``pig`` (``players=2``, ``winscore``, ``diceoutcomes=6``, ``horizon``) is the
ruleset ``pig`` with ``goal = winscore``: a chance outcome ``k`` is the face ``k + 1``,
action 0 rolls and action 1 stops. Two readings differ and neither changes a value:
OpenSpiel lets a player stop at a turn total of 0 (a pass), which here a turn never does
(it starts with a roll; a pass is never better than a roll, which only adds a 1's pass to
the chance of more points), and once the score and the turn total reach the goal it offers
only the stop (here the stop is offered with the roll, and it wins at once). Its
``horizon`` (moves before the game is called off, 1000 by default) is not modelled.
"""

from __future__ import annotations

import re

from thousand.base.errors import BotError
from thousand.base.i18n import _
from thousand.engine.turn import Action
from thousand.rules.ruleset import Ruleset, load_ruleset

__all__ = ["ROLL", "STOP", "OpenSpielBot", "openspiel_pig", "pig_rules", "pig_state", "read_pig"]

ROLL, STOP = 0, 1
_STATE = re.compile(r"Scores: (\d+) (\d+), Turn total: (\d+)\s*Current player: (-?\d+)")


def pig_rules(game) -> Ruleset:
    """This project's ruleset of an OpenSpiel ``pig`` game (one line of error for the
    parameters it does not cover)."""
    params = game.get_parameters()
    if game.get_type().short_name != "pig":
        raise BotError(_("OpenSpiel game {0!r}: only pig is covered").format(game.get_type().short_name))
    if params.get("players", 2) != 2 or params.get("diceoutcomes", 6) != 6 or params.get("piglet", False):
        raise BotError(_("OpenSpiel pig: covered with players=2, diceoutcomes=6 and no piglet, not {0}").format(params))
    return load_ruleset("pig", [f"goal={int(params.get('winscore', 100))}"])


def read_pig(state) -> tuple[tuple[int, int], int, int]:
    """((score of player 0, of player 1), turn total, player to move) of an OpenSpiel pig state."""
    m = _STATE.search(str(state))
    if m is None:
        raise BotError(_("not an OpenSpiel pig state: {0!r}").format(str(state)[:80]))
    a, b, t, p = (int(x) for x in m.groups())
    return (a, b), t, p


def _faces(n: int) -> list[int]:
    """Faces 2 to 6 that add up to ``n`` (0 or at least 2)."""
    out = []
    while n > 0:
        f = min(6, n)
        if n - f == 1:
            f -= 1
        out.append(f)
        n -= f
    return out


def pig_state(game, scores: tuple[int, int], player: int, total: int):
    """An OpenSpiel pig state with these scores, ``player`` to move at turn ``total`` (the
    last roll counted), reached by rolls and stops: player 0 banks its score, player 1
    its, and the mover's turn rolls up to ``total`` (player 1 moves after player 0 passes)."""
    s = game.new_initial_state()

    def roll(f):
        s.apply_action(ROLL)
        s.apply_action(f - 1)  # the chance outcome of face f

    for q in (0, 1):
        for f in _faces(scores[q]):
            roll(f)
        s.apply_action(STOP)
    if player == 1:
        s.apply_action(STOP)  # player 0 passes
    for f in _faces(total):
        roll(f)
    return s


class OpenSpielBot:
    """An OpenSpiel ``Bot`` asked as a Python bot: each decision of Pig becomes the OpenSpiel
    state it is (:func:`pig_state`, the mover as player 0) and the bot's ``step`` answers
    roll (0) or stop (1). ``make(game, player_id)`` gives the bot (or it is the bot)."""

    def __init__(self, make, game):
        self.game, self.make, self._bots = game, make, {}
        self.deterministic = bool(getattr(make, "deterministic", True))

    def _bot(self, player: int):
        b = self._bots.get(player)
        if b is None:
            b = self._bots[player] = self.make(self.game, player) if callable(self.make) else self.make
        return b

    def decide(self, state) -> Action:
        # Pig's state is the scores, the turn total and who moves: the mover is shown as
        # player 0 (the exact evaluation asks a decision once, whichever seat reached it)
        f = state.roll[0]
        s = pig_state(self.game, (state.me.score, state.opponent.score), 0, state.turn_total + f)
        a = self._bot(0).step(s)
        want = {ROLL: True, STOP: False}.get(int(a))
        chosen = next((x for x in state.legal if x.roll == want), None)
        if chosen is None:
            e = BotError(f"OpenSpiel action {a!r} is not roll (0) or stop (1)")
            e.kind = "illegal"  # a counted fault of the answer, as every bot's
            raise e
        return chosen

    def new_game(self) -> None:
        for b in self._bots.values():
            restart = getattr(b, "restart", None)
            if callable(restart):
                restart()


def openspiel_pig(rs: Ruleset, spec: str):
    """OpenSpiel's pig game with the goal of ``rs``, which must be Pig's rules."""
    try:
        import pyspiel
    except ImportError:
        raise BotError(_("bot {0!r}: OpenSpiel is not installed: pip install 'thousand[rl]'").format(spec)) from None

    game = pyspiel.load_game("pig", {"winscore": rs.goal})
    if pig_rules(game).hash != rs.hash:
        raise BotError(_("bot {0!r}: OpenSpiel bots play OpenSpiel's pig (--set goal=N only)").format(spec))
    return game
