"""thousand: the exact optimal-play solver for the dice game 1000 («Тысяча») and its family.

The public Python API (docs/api.md)::

    import thousand
    rs = thousand.load_ruleset("classic", ["goal=500"])
    sol = thousand.solve(rs, "race")            # or "turn", "duel"
    sol.start_value()                           # expected turns to win alone
    sol.advise(thousand.PlayerState(0, opened=False), roll=(1, 5, 3, 3, 4))

    three = thousand.solve_players(thousand.load_ruleset("pig", ["goal=30"]), 3)
    three.seat_values()                         # each seat's chance, equilibrium play

    poker = thousand.load_ruleset("poker")      # poker dice, any number of players
    game = thousand.solve_poker(poker, players=3)
    game.seat_values[3]                         # each seat's chance with optimal play
    game.advise((6, 6, 3, 2, 1), after=2)       # stop or which dice to re-roll

A turn in play is one state machine (:class:`TurnRules`); solved objectives are one
result type (:class:`Solution`) with the same fields for every objective.

The package is layered; each layer is a subpackage that imports only the layers
before it (docs/architecture.md; ``tests/test_layers.py`` holds the code to it):

    base -> rules -> kernel -> engine -> solvers -> tables -> advice -> analysis -> play -> web -> cli

The names below are imported on first use (PEP 562), so that a command that needs one part
(a poker-dice answer, a ruleset check) does not wait for the others to load. The module
paths of the flat layout before 0.2 (``thousand.duel``, ``thousand.game``, ...) still
import, with a DeprecationWarning, until the next release (:mod:`thousand._compat`,
CHANGELOG.md).
"""

import sys as _sys
import types as _types

from thousand import _compat
from thousand.base.version import __version__ as __version__

_WHERE = {
    "Advice": "solvers.advice",
    "Option": "solvers.advice",
    "Action": "engine.turn",
    "TurnEnd": "engine.turn",
    "TurnResult": "engine.turn",
    "TurnRules": "engine.turn",
    "TurnState": "engine.turn",
    "finish_turn": "engine.turn",
    "BotError": "base.errors",
    "Refused": "base.errors",
    "RulesetError": "base.errors",
    "StateError": "base.errors",
    "TableError": "base.errors",
    "ThousandError": "base.errors",
    "PlayerState": "engine.player",
    "Ruleset": "rules.ruleset",
    "load_ruleset": "rules.ruleset",
    "preset_names": "rules.ruleset",
    "METHODS": "storage.solve",
    "OBJECTIVES": "storage.solve",
    "Solution": "storage.solve",
    "PlayersSolution": "storage.players",
    "solve_players": "storage.players",
    "PokerRuleset": "rules.poker",
    "PokerSolution": "solvers.poker",
    "solve_poker": "storage.poker",
}

__all__ = sorted([*_WHERE, "solve", "__version__"])

_compat.install()


def __getattr__(name: str):
    if name == "solve":
        from thousand.storage.solve import solve

        return solve
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'thousand' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(f"thousand.{where}")
    value = getattr(module, "poker_solution" if name == "solve_poker" else name)
    globals()[name] = value
    return value


def __dir__():
    return __all__


class _Package(_types.ModuleType):
    """``thousand.solve`` is the function, although ``thousand.solve`` was also a module
    (now an alias of :mod:`thousand.storage.solve`): the import system binds a loaded
    submodule to its package's attribute, which would hide the function; that one binding
    is ignored (the module stays in ``sys.modules``)."""

    def __setattr__(self, name, value):
        if name == "solve" and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
