"""Approximate play for three players and more, where the exact equilibrium
(:mod:`thousand.solvers.nplayer`) is out of reach: what a seat's turn DP maximises instead.

Every method here is a *decider*: for mover ``i`` against a tuple of opponents it gives
the end values ``(stop[t], Z, W)`` its turn DP maximises (:func:`thousand.kernel.turn_dp`
with the kernel's tie rules); the decisions that come out are then played in the real
game. :func:`thousand.solvers.profile.evaluate_profile` values them exactly.

* ``duel`` -- the duel against the strongest opponent (the one against whom the mover's
  two-player P(win) is lowest), the others ignored: ``stop[t] = 1 - P(y*_t, next(i, t))``,
  ``Z = 1 - P(y*, zero(i))``, ``W = 1``, with ``y*_t`` the opponent after the end at ``t``
  (overtaken, pushed off the barrel).
* ``race`` -- the fewest expected turns to win alone: ``stop[t] = -N(next(i, t))``,
  ``Z = -N(zero(i))``, ``W = 0``.
* ``product`` -- every duel at once: the chance of beating each opponent in a duel from
  where the turn leaves the two of them, multiplied, ``stop[t] = prod_j (1 - P(y_j,t, next(i, t)))``,
  ``Z = prod_j (1 - P(y_j, zero(i)))``, ``W = 1``. The product would be the chance of beating all of
  them if the duels were independent; they are not (they share the mover's own dice), but
  the decisions it leads to are what matters.
* ``odds`` -- every duel at once, combined as odds: the mover's chance of finishing first
  in a race of memoryless finishers whose pairwise chances are the duels' (``q_j = 1 -
  P(y_j,t, next(i, t))``), ``1 / (1 + sum_j (1 - q_j) / q_j)`` (:func:`combine_duels`);
  ``Z`` likewise, ``W = 1``. Unlike the product, the values of every player sum to one
  (they estimate the chance to win), and a mover far behind one opponent is not counted
  as losing to the other as well. Measured, it gives up the least on Pig, plain and Farkle,
  and a little more than the product on classic's rules (docs/results.md).
* ``ahead`` and ``round`` -- the odds looked at after the next turns, played out with the
  dice exact (:class:`LookaheadDecider`): the others' next turns (``ahead``), or the whole
  next round, the mover's own next turn too (``round``), each played by the odds'
  decisions. Measured on classic's rules they give up a half to a sixth of what the
  product does (docs/results.md). ``ahead`` advises three players of the 1000 rules from
  the command line, computed at each decision; ``round`` would play out some hundred
  times more turns there, so it is measured only.
* ``finish`` -- a best response to the opponents' finishing times. Each opponent ``j`` is
  taken to play the race policy alone from its state ``y_j``; ``S_j(r)`` = P(it has not won
  within ``r`` of its turns), by the race policy's Markov chain, and ``G(r) = prod_j S_j(r)``.
  The mover wins on its turn ``r + 1`` from now if it reaches the goal then and every
  opponent survived ``r`` turns, so

      U(x, r) = TurnDP_x( stop[t] = U(next(x, t), r + 1), Z = U(zero(x), r + 1), W = G(r) ),

  from ``U(., R + 1) = 0`` (``R`` the first ``r`` with ``G(r) < 1e-12`` for every opponent
  tuple asked, at most :data:`MAX_ROUNDS`) down to ``r = 1``; the decision now is the turn
  DP against ``U(., 1)`` with ``W = G(0) = 1``. ``U(x, 0)`` is the chance of a plan fixed
  now against opponents who do race; replanning every turn, as advice does, sees their
  actual states and does better. The opponents' reactions and every interaction
  (overtaking, push-off) are ignored: measured, this is the weakest of the four.

* ``memoryless`` -- the opponents as one memoryless opponent (:mod:`thousand.solvers.geometric`,
  the six-dice duel's approximation, for N players): opponent ``j`` in state ``y_j`` wins
  each of its turns with chance ``1/N(y_j)`` (its expected turns alone), so the mover
  survives a round of them with ``D = prod_j (1 - 1/N(y_j))``, and a turn that leaves the
  mover in ``x'`` and the opponents in ``y'`` is worth ``D(y') V_q(x')`` with ``q = 1 - D``
  (``V_q`` interpolated in ``log(1/q)``); ``Z`` likewise from ``zero(x)``, ``W = 1``. Under
  ``equal_turns`` a win before the last seat keeps its exact value, the rest of the round
  (:class:`thousand.solvers.lastturn.LastRound`), and such a turn runs to the final-total horizon.
  It needs no duel table, so it serves games whose pairs are too many (six-dice).

What each costs in win probability against the exact equilibrium is measured by
``bench/bench_approx.py`` (docs/results.md); the measured figures ship in
``approx_measured.json`` beside this module, and advice names the method and its loss.
"""

from __future__ import annotations

import numpy as np

from thousand import kernel
from thousand.engine.states import WIN_INDEX, StateSpace

__all__ = [
    "MAX_ROUNDS",
    "METHODS",
    "TAIL",
    "DuelDecider",
    "FinishDecider",
    "FinishTimes",
    "LookaheadDecider",
    "MemorylessDecider",
    "OddsDecider",
    "ProductDecider",
    "RaceDecider",
    "combine_duels",
    "duel_matrix",
    "duel_odds",
    "interacting",
    "race_turns",
]

METHODS = ("product", "odds", "duel", "race", "finish", "memoryless", "ahead", "round")
MAX_ROUNDS = 2000
TAIL = 1e-12


def race_turns(space: StateSpace, solution) -> np.ndarray:
    """The race table's expected turns per state of ``space`` (the table's rows matched by state)."""
    out = np.empty(len(space))
    for k, x in enumerate(space.states):
        out[k] = solution.value(x)
    return out


def duel_matrix(space: StateSpace, solution) -> np.ndarray:
    """The duel table's P(mover i wins against j) over the states of ``space``."""
    idx = np.array([solution.state_index(x) for x in space.states])
    return np.asarray(solution.table.values)[np.ix_(idx, idx)]


def combine_duels(q: np.ndarray, method: str) -> np.ndarray:
    """The mover's value from its duel chances ``q`` (..., n), one against each opponent.

    ``product``: ``prod_j q_j``. ``odds``: the chance of finishing first in a race of
    memoryless finishers whose pairwise chances are the duels' (Luce's choice axiom): with
    the mover's rate 1 and opponent j's ``r_j = (1 - q_j) / q_j`` (so that
    ``q_j = 1 / (1 + r_j)``), the mover finishes first with ``1 / (1 + sum_j r_j)``, i.e.

        prod_j q_j / (prod_j q_j + sum_j (1 - q_j) prod_{k != j} q_k);

    0 where every term is 0 (an opponent sure to beat the mover). For one opponent both are
    ``q``. The odds form is exact when the players' finishing times are independent and
    exponential; the product counts the mover's own dice once per opponent."""
    prod = np.prod(q, axis=-1)
    if method == "product":
        return prod
    if method != "odds":
        raise ValueError(f"no duel combination {method!r}")
    n = q.shape[-1]
    before = [np.ones_like(prod)]  # before[j]: the product of q_k for k < j; after[j]: for k > j
    for j in range(n - 1):
        before.append(before[-1] * q[..., j])
    after = [np.ones_like(prod)]
    for j in range(n - 1, 0, -1):
        after.append(after[-1] * q[..., j])
    others = np.zeros_like(prod)
    for j in range(n):
        others += (1.0 - q[..., j]) * before[j] * after[n - 1 - j]
    den = prod + others
    return np.divide(prod, den, out=np.zeros_like(prod), where=den > 0)


def _digits(rest: np.ndarray, m: int, n: int) -> np.ndarray:
    """(K, n) player-state indices of the opponents named by flat indices ``rest``
    (base ``m``, the next to move first)."""
    out = np.empty((len(rest), n), dtype=np.int64)
    r = np.asarray(rest, dtype=np.int64).copy()
    for j in range(n - 1, -1, -1):
        out[:, j] = r % m
        r //= m
    return out


def _ends(space: StateSpace, i: int, values: np.ndarray, win) -> tuple[np.ndarray, np.ndarray]:
    """(stop, forced) end values (T+1, K) of state ``i`` read from ``values`` (m, K) of the
    next states, ``win`` (K,) where the end wins, 0 where there is none."""
    K = values.shape[1]
    out = []
    for nxt in (space.stop_idx[i], space.forced_idx[i]):
        v = np.zeros((len(nxt), K))
        ok = nxt >= 0
        v[ok] = values[nxt[ok]]
        v[nxt == WIN_INDEX] = win
        out.append(v)
    return out[0], out[1]


def _chances(space: StateSpace, i: int, Q: np.ndarray):
    """The end values of mover ``i`` from ``Q`` (m, K), its chance after a turn that leaves
    it in each state, per column: (end values at every total -- a bank or a mid-turn end,
    whichever the total has --, bust, win = 1)."""
    K = Q.shape[1]
    stop, forced = _ends(space, i, Q, np.ones(K))
    return stop + forced, Q[space.bust_idx[i]], np.ones(K)


class RaceDecider:
    """``race``: minus the expected turns to win alone (a win is 0)."""

    name = "race"

    def __init__(self, space: StateSpace, turns: np.ndarray):
        self.space, self.J = space, -np.asarray(turns, dtype=float)

    def decide(self, i: int, rest: np.ndarray, seat: int = 0):
        K = len(rest)
        stop, forced = _ends(self.space, i, self.J[:, None], np.zeros(1))  # alike for every column
        return np.repeat(stop + forced, K, axis=1), np.full(K, self.J[self.space.bust_idx[i]]), np.zeros(K)


class DuelDecider:
    """``duel``: the two-player values against the strongest opponent (lowest P(i wins))."""

    name = "duel"
    combination = "product"  # how the duels against several opponents combine (one here)

    def __init__(self, space: StateSpace, P: np.ndarray, opponents: int, rows=None):
        """``rows``: the states' :class:`thousand.solvers.nplayer.EndRows` where already
        built (an N-player game's ``ends``; on the 1000 presets they take gigabytes)."""
        from .nplayer import end_rows

        self.space, self.P, self.n = space, np.asarray(P, dtype=float), opponents
        self.rows = end_rows(space) if rows is None else rows

    def strongest(self, i: int, ys: np.ndarray) -> np.ndarray:
        """Per row of ``ys`` (K, n), the opponent the mover ``i`` fares worst against
        (the first of equals: the next to move)."""
        return ys[np.arange(len(ys)), np.argmin(self.P[i][ys], axis=1)]

    def duels(self, i: int, ys: np.ndarray):
        """The end values of mover ``i``'s duel chances against the opponents ``ys`` (K, n'),
        combined (:func:`combine_duels`), each opponent after overtaking and push-off at every
        end, as the advice's ``duels_advisor`` and ``duel_advisor`` value them: the product
        ``prod_j (1 - P(y_j', x'))``, or the odds."""
        e = self.rows[i]
        K = len(ys)
        after = ys[None] if e.opp is None else e.opp[:, ys]  # (B, K, n') the opponents after each end
        ends = np.zeros((int(self.space.T[i]) + 1, K))
        ends[e.rows] = combine_duels(1.0 - self.P[after, e.nxt[:, None, None]], self.combination)
        ends[e.win_rows] = 1.0
        bust = combine_duels(1.0 - self.P[ys, self.space.bust_idx[i]], self.combination)
        return ends, bust, np.ones(K)

    def decide(self, i: int, rest: np.ndarray, seat: int = 0):
        y = self.strongest(i, _digits(rest, len(self.space), self.n))
        return self.duels(i, y[:, None])


class ProductDecider(DuelDecider):
    """``product``: the product of the mover's duel chances against every opponent."""

    name = "product"

    def decide(self, i: int, rest: np.ndarray, seat: int = 0):
        return self.duels(i, _digits(rest, len(self.space), self.n))


class OddsDecider(ProductDecider):
    """``odds``: the duels' odds combined (:func:`combine_duels`)."""

    name = "odds"
    combination = "odds"


def duel_odds(
    game, P: np.ndarray, states: np.ndarray | None = None, combination: str = "odds", place: int | None = None
) -> np.ndarray:
    """Every player's combined duel chances in ``states`` of the N-player ``game`` (flat
    indices; default every state), (K, N) in the order of play from the mover: player
    ``a`` against ``b`` has the duel chance of whichever of the two moves first (``P[a, b]``
    if ``a`` does, else ``1 - P[b, a]``), combined over the others by :func:`combine_duels`.
    ``place``: that player's alone, (K,)."""
    states = np.arange(game.total) if states is None else np.asarray(states, dtype=np.int64) % game.total
    d = _digits(states, game.m, game.N)
    places = range(game.N) if place is None else (place,)
    U = np.empty((len(states), len(places)))
    for k, a in enumerate(places):
        q = [P[d[:, a], d[:, b]] if a < b else 1.0 - P[d[:, b], d[:, a]] for b in range(game.N) if b != a]
        U[:, k] = combine_duels(np.stack(q, axis=-1), combination)
    return U if place is None else U[:, 0]


class LookaheadDecider:
    """``ahead`` and ``round``: the next turns played out with the dice exact, then the
    duels' odds. With ``U_0`` every player's duel odds in every state (:func:`duel_odds`)
    and the turns played by the odds' decisions (:class:`OddsDecider`),

        U_d(s) = E[ U_{d-1}(s') ]  over the turn of the mover of s (s' the state after it),

    and the mover maximises its own place in ``U_depth`` at the ends of its turn. ``ahead``
    looks through the others' next turns (``depth`` = N - 1), ``round`` through the whole
    next round, the mover's own next turn too (``depth`` = N).

    ``whole=True`` computes ``U_depth`` for every state of the game at once, one step of
    :meth:`thousand.solvers.profile.LevelPlan.step` over every level per turn looked
    through (measurement, on games whose equilibrium is solved); ``whole=False`` computes
    it at each decision for the states its turns reach alone (:meth:`values`): advice on
    games too large to hold, such as the 1000 presets with three players. Both give the
    same values (a test compares them)."""

    def __init__(self, game, P: np.ndarray, depth: int, whole: bool = True):
        if game.seats > 1:
            raise ValueError("the duels' odds are for games that end at the first win")
        self.game, self.P, self.depth = game, np.asarray(P, dtype=float), depth
        self.name = "ahead" if depth == game.N - 1 else "round" if depth == game.N else f"ahead-{depth}"
        self.odds = OddsDecider(game.space, self.P, game.N - 1, rows=game.ends)
        self.U = None
        if whole:
            from .profile import level_plans

            plans = level_plans(game, self.odds)
            U = duel_odds(game, self.P)
            for _d in range(depth):
                new = np.empty_like(U)
                for plan in plans:
                    new[plan.lvl] = plan.step(U, game)
                U = new
            self.U = U

    def decide(self, i: int, rest: np.ndarray, seat: int = 0):
        from .nplayer import _stop_values

        if self.U is not None:
            from .profile import decide_by

            return decide_by(self.U, self.game, i, rest, seat)
        game = self.game
        succ, rows, win_rows = game.successors(i, rest)
        zero = game.bust_next(i * game.M1 + np.asarray(rest, dtype=np.int64))
        need = np.unique(np.concatenate([succ.ravel(), zero]))
        val = self.values(need, self.depth, game.N - 1)  # the mover is the last to move again
        stop = _stop_values(game.space, i, val[np.searchsorted(need, succ)], rows, win_rows)
        return stop, val[np.searchsorted(need, zero)], np.ones(len(rest))

    def values(self, states: np.ndarray, depth: int, place: int) -> np.ndarray:
        """``U_depth(states)[place]``, from the states the turns of ``states`` reach: the
        mover of a state wins (place 0) or its turn leads to a state where the player in
        ``place`` sits one place further back."""
        from .profile import decided_ends

        game = self.game
        if depth == 0:
            return duel_odds(game, self.P, states, place=place)
        out = np.zeros(len(states))
        _seat, movers, rest = game.split(states)
        zero_all = game.bust_next(states)
        parts, reached = [], []
        for i in np.unique(movers):
            cols = np.flatnonzero(movers == i)
            bank_p, win_p, instant_p, bust_p = decided_ends(game, int(i), *self.odds.decide(int(i), rest[cols]))
            succ, _rows, _wins = game.successors(int(i), rest[cols])
            parts.append((cols, bank_p, succ, bust_p))
            if depth > 1:  # the states whose values the next turn looked through needs
                reached += [succ[bank_p > 0.0], zero_all[cols][bust_p > 0.0]]
            if place == 0:
                out[cols] += win_p.sum(axis=0) + instant_p
        before = (place - 1) % game.N
        if depth == 1:  # the odds where the turns end, read where they are reached (no set to gather)
            for cols, bank_p, succ, bust_p in parts:
                some = bank_p > 0.0
                got = np.zeros(bank_p.shape)
                got[some] = duel_odds(game, self.P, succ[some], place=before)
                out[cols] += (bank_p * got).sum(axis=0)
                out[cols] += bust_p * duel_odds(game, self.P, zero_all[cols], place=before)
            return out
        need = np.unique(np.concatenate(reached))
        if not len(need):  # every turn here wins
            return out
        val = self.values(need, depth - 1, before)
        for cols, bank_p, succ, bust_p in parts:
            at = np.searchsorted(need, succ)
            got = np.where(bank_p > 0.0, val[np.minimum(at, len(need) - 1)], 0.0)
            out[cols] += (bank_p * got).sum(axis=0)
            z = np.searchsorted(need, zero_all[cols])
            out[cols] += np.where(bust_p > 0.0, bust_p * val[np.minimum(z, len(need) - 1)], 0.0)
        return out


class FinishTimes:
    """The opponents' finishing times under the race policy, and the mover's best
    response to them (the module docstring's ``U``)."""

    def __init__(self, space: StateSpace, turns: np.ndarray, table=None):
        from .race import policy_matrix

        self.space = space
        self.table = table or kernel.roll_table(space.rs)
        J = np.append(-np.asarray(turns, dtype=float), 0.0)
        P = policy_matrix(self.table, space, J).tocsr()
        # S[y, r] = P(not won within r turns from y): S[:, r + 1] = P S[:, r]
        cols = [np.ones(len(space))]
        while len(cols) <= MAX_ROUNDS and cols[-1].max() >= TAIL:
            cols.append(P @ cols[-1])
        self.S = np.stack(cols, axis=1)  # (m, R + 1)

    def survival(self, ys: np.ndarray) -> np.ndarray:
        """G (K, R + 1): the chance that none of the opponents ``ys`` (K, n) has won within r turns."""
        G = np.ones((len(ys), self.S.shape[1]))
        for j in range(ys.shape[1]):
            G *= self.S[ys[:, j]]
        return G

    def layers(self, ys: np.ndarray, down_to: int = 1) -> np.ndarray:
        """U(., down_to) (m, K) against the opponent tuples ``ys`` (K, n)."""
        G = self.survival(ys)
        tail = np.flatnonzero((G < TAIL).all(axis=0))
        R = int(tail[0]) if len(tail) else G.shape[1] - 1
        sp, m, K = self.space, len(self.space), len(ys)
        U = np.zeros((m, K))
        for r in range(R, down_to - 1, -1):
            new = np.empty((m, K))
            for x in range(m):
                stop, forced = _ends(sp, x, U, G[:, r])
                new[x] = kernel.turn_dp(
                    self.table, sp.stop_ok[x], stop, sp.forced_ok[x], forced, U[sp.bust_idx[x]], G[:, r]
                ).start
            U = new
        return U


class FinishDecider:
    """``finish``: the best response to the opponents' finishing times (:class:`FinishTimes`)."""

    name = "finish"

    def __init__(self, space: StateSpace, turns: np.ndarray, opponents: int, table=None):
        self.space, self.n = space, opponents
        self.times = FinishTimes(space, turns, table)
        self._U1: np.ndarray | None = None

    def first_layer(self) -> np.ndarray:
        """U(x, 1) for every state x and every opponent tuple (columns by flat index)."""
        if self._U1 is None:
            m = len(self.space)
            ys = _digits(np.arange(m**self.n), m, self.n)
            self._U1 = self.times.layers(ys)
        return self._U1

    def decide(self, i: int, rest: np.ndarray, seat: int = 0):
        U = self.first_layer()[:, rest]
        return _chances(self.space, i, U)


class MemorylessDecider:
    """``memoryless``: the opponents as one memoryless opponent (the module docstring),
    from a :class:`thousand.solvers.geometric.GeometricDuel` (``V_q`` over its grid and the race
    table's expected turns) for the states of the N-player game ``game``."""

    name = "memoryless"

    def __init__(self, game, geo):
        self.game, self.geo = game, geo
        self.rows = np.array([geo.state_index(x) for x in game.space.states], dtype=np.int64)
        self.d = geo.survival(self.rows)

    def worth(self, x: np.ndarray, D: np.ndarray) -> np.ndarray:
        """``D V_q(x)`` with ``q = 1 - D``, entry by entry (game state indices ``x``)."""
        return self.geo.against(self.rows[x], D)

    def decide(self, i: int, rest: np.ndarray, seat: int = 0):
        game = self.game
        ys = _digits(rest, game.m, game.N - 1)  # (K, n)
        e, T = game.turn_rows(seat)[i], int(game.turn_space(seat).T[i])
        K = len(rest)
        after = ys[None] if e.opp is None else e.opp[:, ys]  # the opponents after each end
        D = np.broadcast_to(np.prod(self.d[after], axis=-1), (len(e.rows), K))
        stop = np.zeros((T + 1, K))
        stop[e.rows] = self.worth(np.broadcast_to(e.nxt[:, None], D.shape), D)
        won = game.win_values(seat, i, rest)
        stop[e.win_rows] = 1.0 if won is None else won[..., 0]
        bust = self.worth(np.full(K, game.bust[i]), np.prod(self.d[ys], axis=-1))
        return stop, bust, np.ones(K)


def interacting(rs) -> bool:
    """Whether a ruleset's moves change other players or cost penalties (overtaking,
    push-off, barrels, bolts, dumps, pits with attempts): the 1000 games, as against Pig,
    plain and Farkle."""
    return bool(rs.overtake or rs.barrel.kind != "none" or rs.bolts.limit or rs.dump or rs.pit_attempts)
