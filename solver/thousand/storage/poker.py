"""Poker dice's table: the seat-order game's values ``T[(n, m)][b, j]`` as one checked
table ``<hash>-poker`` (:mod:`thousand.storage`), found, or solved and written now.
"""

from __future__ import annotations

import sys

import numpy as np

from thousand.base.errors import StateError, TableError
from thousand.base.i18n import _
from thousand.rules.poker import PokerRuleset
from thousand.solvers.poker import MAX_PLAYERS, PokerSolution, solve_poker

from .files import find_table, save_table, write_target

__all__ = ["load_poker", "poker_solution", "save_poker", "solve_poker_table"]


def _encode(sol: PokerSolution) -> tuple[np.ndarray, np.ndarray]:
    values, rows = [], []
    for (n, m), t in sorted(sol.T.items()):
        b, j = np.meshgrid(np.arange(t.shape[0]), np.arange(m), indexing="ij")
        values.append(t.ravel())
        rows.append(np.column_stack([np.full(t.size, n), np.full(t.size, m), b.ravel(), j.ravel()]))
    return np.concatenate(values), np.concatenate(rows).astype(np.int32)


def save_poker(sol: PokerSolution, root):
    """Write the solution as a checksummed table ``<hash>-poker`` under ``root``."""
    values, states = _encode(sol)
    extra = {
        "players": sol.players,
        "hands": sol.H,
        "seconds": round(sol.seconds, 3),
        "rounds": {str(k): v for k, v in sol.rounds.items()},
        "residual": {str(k): v for k, v in sol.residual.items()},
        "replay": {str(k): v for k, v in sol.replay.items()},
    }
    return save_table(root, sol.rs, "poker", values, states, extra)


def load_poker(table, rs: PokerRuleset) -> PokerSolution:
    """A :class:`PokerSolution` from a loaded table (checked by :func:`thousand.storage.load_table`);
    an incomplete or inconsistent one is a :class:`TableError`."""
    meta, values, states = table.meta, np.asarray(table.values), table.states
    players, H = meta.get("players"), rs.hands.count
    bad = f"table {table.path}: "
    if not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS or meta.get("hands") != H:
        raise TableError(bad + "no valid player count or hand count in meta.json")
    T = {}
    for n in range(players):
        for m in range(1, players - n + 1):
            sel = (states[:, 0] == n) & (states[:, 1] == m)
            if sel.sum() != H * m:
                raise TableError(bad + f"the values for {n} to play and {m} holders are incomplete")
            t = np.zeros((H, m))
            rows = states[sel]
            if rows[:, 2].min() < 0 or rows[:, 2].max() >= H or rows[:, 3].min() < 0 or rows[:, 3].max() >= m:
                raise TableError(bad + "a state outside the game")
            t[rows[:, 2], rows[:, 3]] = values[sel]
            T[(n, m)] = t
    seats = {M: T[(0, M)][0].copy() for M in range(1, players + 1)}
    for M, v in seats.items():
        if abs(v.sum() - 1.0) > 1e-9 or not np.allclose(T[(0, M)], v[None, :], atol=0, rtol=0):
            raise TableError(bad + f"the {M}-player seat values do not sum to 1")
    num = lambda key: {int(k): v for k, v in (meta.get(key) or {}).items()}  # noqa: E731
    return PokerSolution(
        rs, players, T, seats, num("rounds"), num("residual"), num("replay"), float(meta.get("seconds") or 0.0)
    )


def poker_solution(rs: PokerRuleset, players: int, tables=None, force: bool = False, progress=None) -> PokerSolution:
    """The solved game for at least ``players`` seats: a stored table that covers it, else
    a solve (written to the tables directory or the user cache); ``progress(line)`` is told
    before a solve starts."""
    if not 1 <= players <= MAX_PLAYERS:
        raise StateError(_("poker dice is solved for 1 to {0} players, not {1}").format(MAX_PLAYERS, players))
    if not force:
        table = find_table(rs, "poker", tables)
        if table is not None:
            sol = load_poker(table, rs)
            if sol.players >= players:
                return sol
            players = max(players, sol.players)
    if progress:
        progress(f"solving {rs.name} (hash {rs.hash}) for up to {players} players: a few seconds, stored for next time")
    sol = solve_poker(rs, players)
    save_poker(sol, write_target(tables))
    sol.solved_now = True
    return sol


def solve_poker_table(rs, tables_dir=None, *, players: int, force: bool = False, progress=False, **_how):
    """The ``poker`` objective (the registry's solver): :func:`poker_solution`."""
    if not isinstance(rs, PokerRuleset):
        raise StateError(_("the poker objective is for poker dice, not {0}").format(rs.name))
    tell = (lambda line: sys.stderr.write(line + "\n")) if progress else None
    return poker_solution(rs, players, tables_dir, force=force, progress=tell)
