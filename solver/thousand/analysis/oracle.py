"""The value of every legal action of a decision, by a solved table.

An :class:`Oracle` answers for the duel table (against the opponent's state) or
the race table (the player alone); an :class:`EquilibriumOracle` for the equilibrium
of three players or more (the mover's chance with the others playing it). Both solve
the mover's turn once per situation with the table's end values
(:class:`thousand.solvers.advice.SolvedTurn`) and value each action by where
:class:`thousand.engine.TurnRules` says it leads.
"""

from __future__ import annotations

import numpy as np

from thousand import kernel
from thousand.base.objectives import objective as objective_named
from thousand.engine.player import PlayerState
from thousand.engine.turn import Action, TurnState
from thousand.rules.ruleset import Ruleset

__all__ = ["EquilibriumOracle", "Oracle"]


class _ActionValues:
    """What the blunder count asks of a table: the value of each legal action of a
    decision (:meth:`values`, which a subclass supplies), the best one and the loss of another."""

    higher = True  # a higher value is better (P(win)); False for expected turns

    def values(self, state) -> list[float]:
        raise NotImplementedError

    def best_index(self, vals: list[float]) -> int:
        return int(np.argmax(vals)) if self.higher else int(np.argmin(vals))

    def best(self, state) -> Action:
        return state.legal[self.best_index(self.values(state))]

    def loss(self, state, action: Action) -> tuple[float, float, Action]:
        """(value given up >= 0, value of the bot's action, the best action)."""
        vals = self.values(state)
        b = self.best_index(vals)
        i = state.legal.index(action)
        lost = vals[b] - vals[i] if self.higher else vals[i] - vals[b]
        return max(lost, 0.0), vals[i], state.legal[b]


def kept_turn(cache: dict, keep: int, key, adv, me):
    """The turn of ``me`` solved by ``adv``, from ``cache`` under ``key`` (solved and kept
    if missing; the cache is emptied when it holds ``keep`` turns)."""
    solved = cache.get(key)
    if solved is None:
        if len(cache) >= keep:
            cache.clear()
        solved = cache[key] = adv.solve_turn(me)
    return solved


def _option_values(adv, solved, state) -> list[float]:
    """The value of each of ``state.legal`` in the solved turn ``solved`` of ``adv``."""
    s = TurnState(state.me, state.turn_total, state.dice, state.roll)
    return [adv.show(solved.value(adv.engine, adv.engine.apply(s, a))) for a in state.legal]


class Oracle(_ActionValues):
    """Values of actions by a solved table (objective ``duel`` or ``race``)."""

    def __init__(self, rs: Ruleset, objective: str, tables_dir: str | None = None, progress: bool = True):
        from thousand.storage.solve import solve_objective

        self.rs, self.objective = rs, objective
        self.kind = objective_named(objective)
        self.solution = solve_objective(rs, objective, tables_dir, progress=progress)
        self.higher = self.kind.higher_is_better
        self._adv: dict = {}
        self._turn: dict = {}
        self._vals: dict = {}
        self._table = kernel.roll_table(rs)

    def advisor(
        self,
        y: PlayerState | None,
        seat: int | None = None,
        to_beat: int | None = None,
        tied: int = 1,
        later: tuple[PlayerState, ...] = (),
    ):
        """The advisor of a turn against ``y``: the duel table's (with ``equal_turns``, in the
        mover's ``seat``, 0 or 1) or the race table's. In a last turn of an equal_turns
        round (``to_beat`` given, held by ``tied`` players, with the players ``later`` still
        to play) the exact chance of the rest of the round, which needs no table."""
        against = self.kind.opponents
        key = self._adv_key(y, seat, to_beat, tied, later) if against else None
        a = self._adv.get(key)
        if a is None:
            if to_beat is not None and against:
                a = objective_named("last turn").advisor(self.rs, later, None, to_beat=to_beat, tied=tied)
            else:
                seat = seat if against and self.solution.seated else None
                a = self.kind.advisor(self.solution, (y,) if against else (), seat)
            self._adv[key] = a
        return a

    @staticmethod
    def _adv_key(y, seat, to_beat, tied, later) -> tuple:
        # a last turn's values do not depend on the players who finished
        return ("last", to_beat, tied, tuple(later)) if to_beat is not None else (y, seat)

    def turn(
        self,
        x: PlayerState,
        y: PlayerState | None,
        seat: int | None = None,
        to_beat: int | None = None,
        tied: int = 1,
        later: tuple[PlayerState, ...] = (),
    ):
        """The solved turn of ``x`` against ``y`` (cached; the rest as in :meth:`advisor`):
        ``(advisor, SolvedTurn)``."""
        key = (x,) + (self._adv_key(y, seat, to_beat, tied, later) if self.kind.opponents else ())
        r = self._turn.get(key)
        if r is None:
            adv = self.advisor(y, seat, to_beat, tied, later)
            r = self._turn[key] = (adv, adv.solve_turn(x))
        return r

    def values(self, state) -> list[float]:
        """The value of each of ``state.legal`` (a :class:`thousand.analysis.bots.BotState`), in the
        objective's terms: P(win) or expected turns.

        In a game of three players or more the duel table plays against the next opponent;
        with ``equal_turns`` a seat before the last as the duel's first seat, the last seat
        as its second (its win is final), and a last turn exactly."""
        key = state.key()
        v = self._vals.get(key)
        if v is None:
            seat = state.seat
            if seat is not None:
                seat = 0 if seat < len(state.opponents) else 1
            adv, sol = self.turn(state.me, state.opponent, seat, state.to_beat, max(state.tied, 1), state.later)
            v = self._vals[key] = _option_values(adv, sol, state)
        return v

    def end_distribution(
        self, x: PlayerState, y: PlayerState | None, seat: int | None = None, to_beat: int | None = None
    ) -> dict:
        """How the optimal turn of ``x`` (against ``y``; ``seat`` and ``to_beat`` as in
        :meth:`advisor`) ends, by the kernel: {(kind, t points): p} with kind
        'stop'/'forced' at total t, ('bust', 0), ('win', 0)."""
        _, sol = self.turn(x, y, seat, to_beat)
        e = sol.ends
        sp, fp, bp, wp = kernel.end_distribution(self._table, e.stop_ok, sol.stop_v, e.forced_ok, sol.forced_v, sol.tv)
        u = self.rs.unit
        out = {}
        for t in np.flatnonzero(sp[:, 0] > 0):
            out[("stop", int(t) * u)] = float(sp[t, 0])
        for t in np.flatnonzero(fp[:, 0] > 0):
            out[("forced", int(t) * u)] = float(fp[t, 0])
        if bp[0] > 0:
            out[("bust", 0)] = float(bp[0])
        if wp[0] > 0:
            out[("win", 0)] = float(wp[0])
        return out


class EquilibriumOracle(_ActionValues):
    """Values of actions by the equilibrium of three players or more (a
    :class:`thousand.storage.players.PlayersSolution`): the mover's chance of winning when
    every other player plays the equilibrium,

        V(a) = sum over the turn's ends e reached after action a of p(e) * V_mover(next state),

    the turn solved against every opponent (in the order they move next, in the mover's
    seat under ``equal_turns``); in a last turn of an ``equal_turns`` round, the exact
    chance of the rest of the round (:func:`thousand.solvers.advice.last_turn_advisor`), as
    the equilibrium's own players play it."""

    def __init__(self, solution, cached_turns: int = 20_000):
        self.solution, self.rs = solution, solution.rs
        self.keep = cached_turns  # solved turns kept (each holds its turn's values)
        self._adv: dict = {}
        self._turn: dict = {}

    def _advisor(self, state):
        if state.to_beat is not None:
            # a last turn's values do not depend on the players who finished
            key = ("last", state.to_beat, max(state.tied, 1), state.later)
        else:
            key = (state.opponents, state.seat)
        adv = self._adv.get(key)
        if adv is None:
            last = objective_named("last turn")
            if state.to_beat is not None:
                adv = last.advisor(self.rs, state.later, None, to_beat=state.to_beat, tied=max(state.tied, 1))
            else:
                adv = objective_named("players").advisor(self.solution, state.opponents, state.seat)
            if len(self._adv) >= self.keep:
                self._adv.clear()
            self._adv[key] = adv
        return key, adv

    def values(self, state) -> list[float]:
        key, adv = self._advisor(state)
        return _option_values(adv, kept_turn(self._turn, self.keep, (state.me, key), adv, state.me), state)
