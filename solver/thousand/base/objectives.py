"""The objectives, each described once: what its value means and how it is labelled, how it
is solved, whether and how it is stored as a table, and which advisor reads it.

Every other module asks this registry (:func:`objective`) instead of comparing names: to add
an objective is to add an :class:`Objective` here and the functions it names. The entries
name their solver and advisor as ``"module:function"`` strings, imported on first use, so
that the command line can offer the names without importing the solvers.

=============  =====================================  ===========  ======================
name           value                                  table        advisor
=============  =====================================  ===========  ======================
``turn``       expected points of one turn            none         the turn alone
``rate``       points per turn in the long run        none         the turn, relative values
``race``       expected turns to win alone            ``race``     the race table
``duel``       P(the mover wins), two players         ``duel``     the duel table
``players``    every seat's P(win), N players         ``playersN`` the equilibrium
``geometric``  P(win) against a memoryless opponent   ``geometric`` the memoryless opponent
``poker``      P(win) at poker dice, N players        ``poker``    poker's own
``last turn``  P(the round's top), a last turn        none         the rest of the round
=============  =====================================  ===========  ======================
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .i18n import N_

__all__ = [
    "CHOSEN",
    "REGISTRY",
    "Objective",
    "SolvedObjective",
    "objective",
    "table_kind",
]


@dataclass(frozen=True)
class Objective:
    """One objective: what it is, how it is solved and stored, and how its value reads."""

    name: str
    #: what a value is, in words (translated where it is shown; a solve's start value is this from the start)
    meaning: str
    #: the start value as the solve's summary names it
    start: str
    #: the value's key in JSON answers, and its short label beside a number (in words;
    #: translated where it is shown)
    value_name: str
    value_label: str
    #: whether a larger value is better (a chance, points) or a smaller one (turns)
    higher_is_better: bool
    #: the range every value lies in (a stored table is checked against it)
    low: float
    high: float
    #: a value needs the other players' states (a game against them, not a player alone)
    opponents: bool
    #: the methods that solve it, the default first (docs/solver.md)
    methods: tuple[str, ...]
    #: solved into a stored table (else solved in a moment, whenever asked)
    stored: bool
    #: ``"module:function"``: ``f(rs, tables_dir, *, progress, force, method, encoding, players)``
    #: returning a :class:`SolvedObjective`; empty where it is not solved on its own
    solver: str
    #: ``"module:function"``: the advisor that reads it; for the 1000 family
    #: ``f(solution, opponents, seat, **situation)`` returning the
    #: :class:`thousand.solvers.advice.TurnAdvisor` of a mover against ``opponents`` (in the
    #: order they move next); poker dice's takes its own situation (``advise(rs, solution,
    #: situation, turn)``: a hand to beat, not a score)
    advised_by: str
    #: ``"module:function"``: ``f(rs, players)`` returning what a solve will cost (states,
    #: seconds); empty where a solve takes no noticeable time
    estimator: str = ""
    #: ``"module:function"``: ``f(folder, meta, values, states, rs, players, repair)``, what a
    #: stored table of it holds beyond values and states; empty where nothing more
    table_check: str = ""
    #: the command-line options that solve it (``{players}`` filled in)
    options: str = ""
    #: the columns of its states.npy: player states, or poker's situations
    state_fields: str = "player"
    #: a table of a number of players (its kind ``name`` + N)
    per_players: bool = False
    #: the methods by which it is solved on a Dask cluster (``--cluster``)
    cluster_methods: tuple[str, ...] = ()
    #: how a new table may store its values (``fixed32``: 32-bit fixed point, for values in [0, 1])
    encodings: tuple[str, ...] = ("float64",)
    #: solved out of core into a .npy file (``--store``), the values held in pieces
    out_of_core: bool = False

    def kind(self, players: int | None = None) -> str:
        """The table kind this objective is stored under (``players3`` for three players)."""
        return f"{self.name}{players}" if self.per_players else self.name

    def solve_options(self, players: int | None = None) -> str:
        return self.options.format(players=players)

    def solve(self, rs, tables_dir=None, **how):
        """The solution for ``rs`` (found stored, or solved now); ``how``: ``progress``,
        ``force``, ``method``, ``encoding``, ``players``, as the objective takes them."""
        if not self.solver:
            from .errors import StateError
            from .i18n import _

            raise StateError(_("the {0} objective is solved for each situation by its advisor").format(self.name))
        return _load(self.solver)(rs, tables_dir, **how)

    def advisor(self, solution, opponents=(), seat: int | None = None, **situation):
        """The advisor of a mover facing ``opponents`` (in the order they move next), in
        ``seat`` under ``equal_turns``; a last turn's ``situation`` is its ``to_beat`` and ``tied``."""
        if self.state_fields != "player":
            raise TypeError(f"the {self.name} objective's advisor takes its own situation: {self.advised_by}")
        return _load(self.advised_by)(solution, tuple(opponents), seat, **situation)

    def estimate(self, rs, players: int | None = None) -> dict:
        """What a solve will cost, before any work (``seconds``: a low, high pair)."""
        if not self.estimator:
            return {"seconds": (0.0, 0.0)}
        return _load(self.estimator)(rs, players)

    def check_table(self, folder, meta, values, states, rs, players, repair) -> None:
        if self.table_check:
            _load(self.table_check)(folder, meta, values, states, rs, players, repair)


def _load(ref: str):
    module, _sep, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


_ADVICE = "thousand.solvers.advice"
# what every objective valued as a chance of winning against opponents shares
_CHANCE = {
    "value_name": "win_probability",
    "value_label": N_("chance to win"),
    "higher_is_better": True,
    "low": 0.0,
    "high": 1.0,
    "opponents": True,
}
_SOLVE = "thousand.storage.solve"

REGISTRY: dict[str, Objective] = {
    o.name: o
    for o in (
        Objective(
            name="turn",
            meaning=N_("the expected points one turn banks (a bust, a mid-turn dump and an overshoot bank nothing)"),
            start="the best expected score of one turn from the start",
            value_name="expected_points",
            value_label=N_("expected points"),
            higher_is_better=True,
            low=0.0,
            high=float("inf"),
            opponents=False,
            methods=("dp",),
            stored=False,
            solver=f"{_SOLVE}:solve_turn",
            advised_by=f"{_ADVICE}:turn_advice",
            options="--objective turn",
        ),
        Objective(
            name="rate",
            meaning=N_("points per turn in the long run, zero turns and their penalties counted"),
            start="the most points per turn in the long run",
            value_name="long_run_points",
            value_label=N_("points (long run)"),
            higher_is_better=True,
            low=-float("inf"),
            high=float("inf"),
            opponents=False,
            methods=("policy",),
            stored=False,
            solver=f"{_SOLVE}:solve_rate",
            advised_by=f"{_ADVICE}:rate_advice",
            options="--objective rate",
        ),
        Objective(
            name="race",
            meaning=N_("the expected turns to reach the goal alone"),
            start="expected turns to win alone from the start",
            value_name="expected_turns",
            value_label=N_("expected turns"),
            higher_is_better=False,
            low=1.0,
            high=float("inf"),
            opponents=False,
            methods=("policy",),
            stored=True,
            solver=f"{_SOLVE}:solve_race_table",
            advised_by=f"{_ADVICE}:race_advice",
            estimator=f"{_SOLVE}:estimate_race",
            options="--objective race",
        ),
        Objective(
            name="duel",
            meaning=N_("the probability that the player to move wins, both playing optimally"),
            start="P(first player wins) with optimal play",
            **_CHANCE,
            methods=("policy", "passes", "textbook"),
            stored=True,
            solver=f"{_SOLVE}:solve_duel_table",
            advised_by=f"{_ADVICE}:duel_advice",
            estimator=f"{_SOLVE}:estimate_duel",
            table_check="thousand.storage.files:check_duel_table",
            options="--objective duel",
            cluster_methods=("passes", "policy"),
            encodings=("float64", "fixed32"),
            out_of_core=True,
        ),
        Objective(
            name="players",
            meaning=N_("every player's chance of winning, all playing the equilibrium of N players"),
            start="P(win) by seat with equilibrium play",
            **_CHANCE,
            methods=("levels",),
            stored=True,
            solver="thousand.storage.players:solve_players_table",
            advised_by="thousand.storage.players:players_advice",
            estimator="thousand.storage.players:estimate",
            table_check="thousand.storage.files:check_players_table",
            options="--players {players}",
            per_players=True,
        ),
        Objective(
            name="geometric",
            meaning=N_("the chance of winning against opponents taken as one memoryless opponent (an estimate)"),
            start="P(win) against a memoryless opponent",
            **_CHANCE,
            methods=("policy",),
            stored=True,
            solver="thousand.storage.geometric:solve_geometric_table",
            advised_by=f"{_ADVICE}:geometric_advice",
            table_check="thousand.storage.files:check_geometric_table",
        ),
        Objective(
            name="poker",
            meaning=N_("the probability of winning a game of poker dice, every player optimal"),
            start="P(win) by seat",
            **_CHANCE,
            methods=("backward",),
            stored=True,
            solver="thousand.storage.poker:solve_poker_table",
            advised_by="thousand.solvers.poker_advice:advise",
            # its situations are checked as they are read (thousand.storage.poker.load_poker)
            options="--players {players}",
            state_fields="poker",
        ),
        Objective(
            name="last turn",
            meaning=N_("the chance of the round's top in a last turn of an equal-turns round"),
            start="P(the round's top)",
            **_CHANCE,
            methods=("dp",),
            stored=False,
            solver="",  # solved for each situation by its advisor
            advised_by=f"{_ADVICE}:last_turn_advice",
        ),
    )
}

#: the objectives a user chooses by name (``--objective``), the rest being chosen for them
CHOSEN = ("turn", "race", "duel", "rate")

_PER_PLAYERS = re.compile(r"([a-z]+)([0-9]+)")


def objective(name: str) -> Objective:
    """The objective called ``name`` (or the table kind ``players3``); a one-line error
    naming the choices for any other."""
    got = REGISTRY.get(name)
    if got is None:
        m = _PER_PLAYERS.fullmatch(name)
        got = REGISTRY.get(m.group(1)) if m else None
        if got is None or not got.per_players:
            from .errors import StateError
            from .i18n import _

            raise StateError(_("unknown objective {0!r}: one of {1}").format(name, ", ".join(CHOSEN)))
    return got


def table_kind(kind: str) -> tuple[Objective, int | None]:
    """The objective of a stored table's kind, and its number of players (``players3``: 3)."""
    obj = objective(kind)
    return obj, (int(kind[len(obj.name) :]) if obj.per_players else None)


@runtime_checkable
class SolvedObjective(Protocol):
    """What every solution meets, whatever its objective: its rules and objective, whether
    it was solved by this call, the value from the start, its advice, and its summary as
    JSON and as text."""

    rs: Any
    solved_now: bool

    @property
    def objective(self) -> str: ...

    def start_value(self) -> Any: ...

    def advise(self, me, *args, **kwargs): ...

    def summary(self) -> dict: ...

    def describe(self) -> str: ...
