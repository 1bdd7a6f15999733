"""Three players and more through tables: the exact equilibrium of :mod:`thousand.solvers.nplayer`
solved or loaded (:func:`solve_players`), the seats' chances, fair compensation, and advice
for the player to move -- exact from the equilibrium, or by the best measured
approximation of :mod:`thousand.solvers.approx`, labelled with its measured cost.

The table of ``N`` players is ``<ruleset hash>-players<N>/`` in the usual format
(:mod:`thousand.storage`): ``values.npy`` (seats * m**N, N) float64, row ``c m**N + sum_k
x_k m**(N-1-k)`` for the player states ``x_0`` (the mover), ``x_1``, ... (the others in
the order they move next) with the mover in seat ``c`` (``equal_turns``: the seat matters,
``seats`` = N; otherwise c = 0, one seat), column ``j`` the chance of the player in place
``j``; ``states.npy`` the player states; ``meta.json`` adds ``players``, the equilibrium
``certificate`` (the largest gain of a deviation, checked at most 1e-9 on load, with every
row summing to 1), ``mixed`` (the states where the mover mixes two policies, with the
weight) and with ``equal_turns`` the ``last_turn_horizon`` (final totals above it count
as it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from thousand import kernel
from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.base.objectives import REGISTRY
from thousand.engine.player import WIN, Moves, PlayerState
from thousand.engine.states import decode
from thousand.rules.ruleset import Ruleset
from thousand.solvers.advice import nearer
from thousand.solvers.lastturn import LastRound, first_seat_T

from .files import Table, find_table, save_table, write_target

__all__ = [
    "ESTIMATE_SPREAD",
    "SECONDS_AROUND",
    "SMALL_GAME",
    "SWEEPS_FACTOR",
    "TURN_DPS_PER_STATE",
    "PlayersSolution",
    "estimate",
    "objective",
    "players_advice",
    "solve_players",
    "solve_players_table",
]

# Up to this many states of the N-player game, a missing equilibrium is solved on request
# (Pig to 50 for three players: 125,000 states, 4 s here).
SMALL_GAME = 200_000
# The solve's time per state, fitted to what this project's 2-core machine measured (quiet,
# both cores; docs/solver.md): 3.3 times a turn DP of one column over the goal's totals
# (in a call of many, :func:`thousand.kernel.turn_seconds`: the best-response rounds, the end
# distributions and the certificate, on two threads where the turns are long) plus 2e-5 s
# of numpy and Python around them; the range shown is 1/ESTIMATE_SPREAD to ESTIMATE_SPREAD
# times that. Measured over that estimate (the turn DP is timed when asked, so these move by
# a few tenths between runs): three players, Pig to 100 1.1, plain to 500 0.7, plain 0.5,
# farkle to 3000 1.7, farkle 1.1, farkle-cardgames 1.2; four players, plain to 150 1.8,
# farkle to 1500 2.4, Pig to 30 0.07 (no mixed states, one-die turns).
TURN_DPS_PER_STATE, SECONDS_AROUND, ESTIMATE_SPREAD = 3.3, 2e-5, 2.5
# Rulesets whose moves lower the score sum (penalties, overtaking, push-off) sweep the levels
# until they settle (17 to 49 sweeps on the tiny test rulesets, 26 on three players of the
# small classic of docs/results.md, 41 on classic to 300). Fitted to those two solves (7.2 s
# for 79,507 states, 604 s for 3,796,416 measured with the code of an earlier day): the
# single-sweep estimate times 7 (they took 0.6 and 1.0 times it).
SWEEPS_FACTOR = 7.0


def objective(players: int) -> str:
    """The table kind of ``players`` seats (the registry's: ``players3``)."""
    return REGISTRY["players"].kind(players)


def solve_players_table(rs: Ruleset, tables_dir=None, *, players: int, progress=False, force=False, **how):
    """The ``players`` objective (the registry's solver): :func:`solve_players`."""
    return solve_players(
        rs,
        players,
        tables_dir,
        force=force,
        progress=progress,
        cluster=how.get("cluster"),
        checkpoint=how.get("checkpoint"),
    )


def players_advice(solution: PlayersSolution, opponents, seat=None):
    """The ``players`` objective's advisor: the equilibrium's (:meth:`PlayersSolution.advisor`)."""
    return solution.advisor(list(opponents), seat)


class PlayersSolution:
    """The equilibrium of ``players`` seats for ``rs``, from its table."""

    def __init__(self, rs: Ruleset, players: int, table: Table, solved_now: bool):
        self.rs, self.players, self.table, self.solved_now = rs, players, table, solved_now
        self.index = table.index
        self.m = len(table.states)
        self.moves = Moves(rs)
        from thousand.solvers.nplayer import seat_count

        self.seats = seat_count(rs, players)
        self._last_round: LastRound | None = None

    @property
    def meta(self) -> dict:
        return self.table.meta

    @property
    def objective(self) -> str:
        return objective(self.players)

    def start_value(self) -> np.ndarray:
        """Every seat's chance from the start (:meth:`seat_values`)."""
        return self.seat_values()

    def flat(self, states, seat: int = 0) -> int:
        """The row of the tuple of player states (the mover first, in ``seat``: 0 the
        first; it matters under ``equal_turns`` only)."""
        if len(states) != self.players:
            raise StateError(
                _("{n} players: give the mover and {k} opponents").format(n=self.players, k=self.players - 1)
            )
        s = 0
        for x in states:
            x = self.moves.check(x)
            if x not in self.index:
                raise StateError(_("no such game state in the table: {0}").format(x.describe(self.rs)))
            s = s * self.m + self.index[x]
        return (seat % self.seats) * self.m**self.players + s

    def check_seat(self, seat: int | None) -> int:
        """The mover's seat (0 = the first), which an ``equal_turns`` game needs."""
        if seat is None:
            if self.seats > 1:
                raise StateError(
                    _(
                        "{name} plays equal turns: say which seat you move in, --seat first, second, ... (of {n})"
                    ).format(name=self.rs.name, n=self.players)
                )
            return 0
        if not 0 <= seat < self.players:
            raise StateError(_("seat {k}: a game of {n} players has seats 1 to {n}").format(k=seat + 1, n=self.players))
        return seat

    def value(self, states, seat: int = 0) -> np.ndarray:
        """Every player's chance in the state ``states`` (mover first, then the order of
        play), in that order; the mover in ``seat``."""
        return np.array(self.table.values[self.flat(states, seat)], dtype=float)

    def seat_values(self) -> np.ndarray:
        """Each seat's chance from the start, the first seat to move."""
        x0 = self.moves.normalise(self.moves.initial())
        return self.value([x0] * self.players)

    def compensated_seats(self) -> list[int]:
        """The seats :meth:`fair_compensation` gives a head start: every later seat; under
        ``equal_turns``, where the later seats know the total to beat and are ahead, every
        seat whose chance from the start is below 1/N."""
        if self.seats == 1:
            return list(range(1, self.players))
        v = self.seat_values()
        return [k for k in range(self.players) if v[k] < 1.0 / self.players]

    def fair_compensation(self) -> list[tuple[int, float]]:
        """For each seat k of :meth:`compensated_seats`: the head start ``c`` (seat k alone
        starts with c points) that brings its chance closest to 1/N, and that chance."""
        x0 = self.moves.normalise(self.moves.initial())
        target = 1.0 / self.players
        out = []
        for k in self.compensated_seats():
            best = None
            for c in range(0, self.rs.goal, self.rs.unit):
                y = self.moves.normalise(PlayerState(c, opened=True)) if c else x0
                if y not in self.index:
                    continue
                states = [x0] * self.players
                states[k] = y
                p = float(self.table.values[self.flat(states)][k])
                if best is None or nearer(p, best[1], target):
                    best = (c, p)
                if p > target + 0.25:
                    break
            out.append(best)
        return out

    def advisor(self, opponents, seat: int | None = None):
        """A :class:`thousand.solvers.advice.TurnAdvisor` for a mover facing ``opponents`` (in the
        order they move next): values are the mover's chance in the equilibrium. Under
        ``equal_turns`` the mover's ``seat`` (0 = the first) is needed: a win before the
        last seat is worth the rest of the round (:class:`thousand.solvers.lastturn.LastRound`) and
        such a turn may roll on past the goal to raise its final total."""
        from thousand.solvers.advice import TurnAdvisor

        opponents = [self.moves.check(o) for o in opponents]
        N = self.players
        seat = self.check_seat(seat)
        self.flat([self.moves.normalise(self.moves.initial()), *opponents])  # checks the count and states
        V = self.table.values
        mv, rs = self.moves, self.rs
        r = N - 1 - seat if self.seats > 1 else 0  # the later seats a win leaves their last turns
        horizon = None
        if r:
            top = int(self.meta["last_turn_horizon"])
            rest = self.last_round()
            Y = 0
            for o in opponents[:r]:
                Y = Y * self.m + self.index[o]
            horizon = lambda x: first_seat_T(rs, mv, x, top) * rs.unit  # noqa: E731

        def chance(others, y) -> float:
            """The mover's chance after its turn ends in ``y`` with the others as ``others``."""
            return float(V[self.flat([*others, y], seat + 1), N - 1])

        def values_of(ends):
            # an end at total t changes the others too (overtaking, push-off): ends.others_after
            def at(t, y):
                if y is None:
                    return 0.0
                if y == WIN:  # final, or the rest of the round against the final total
                    return float(rest.value(r, Y, ends.x.score + t * rs.unit)[0]) if r else 1.0
                change = ends.others_after(mv, t)
                return chance([mv.affect_opponent(o, *change) for o in opponents], y)

            stop = np.array([at(t, y) for t, y in enumerate(ends.stop_next)])[:, None]
            forced = np.array([at(t, y) for t, y in enumerate(ends.forced_next)])[:, None]
            return stop, forced, np.array([chance(opponents, ends.bust_next)]), np.ones(1)

        return TurnAdvisor(self.rs, "duel", values_of, float, True, "win_probability", horizon=horizon)

    def option_chances(self, adv, me: PlayerState, opponents, seat: int | None, options) -> list[np.ndarray]:
        """Every player's chance after each of ``options`` (the options of advice from
        :meth:`advisor`'s ``adv`` for ``me``; the mover first, then ``opponents`` in the
        order they move): the mover plays on by the equilibrium (its own best, as the
        advice's values say), and each turn end leads to a game state whose whole value
        vector the table holds,

            C(node) = sum over rolls r of p(r) C(after(node, r)),  after a choice the
            mover's best option's C;  C(end) = the table's vector of the state it leads to.

        Its first entry is the option's value; the entries sum to 1."""
        from thousand.engine.turn import TurnEnd, roll_outcomes

        opponents = [self.moves.check(o) for o in opponents]
        seat = self.check_seat(seat)
        engine, N, rs = adv.engine, self.players, self.rs
        solved = adv.solve_turn(me, max((o.detail.get("total", 0) for o in options), default=0))
        ends, u = solved.ends, rs.unit
        r = N - 1 - seat if self.seats > 1 else 0  # the later seats a win leaves their last turns
        V = self.table.values

        def state_vector(others, y) -> np.ndarray:
            # the table's row lists the next mover first and the mover last: the mover first again
            return np.roll(np.asarray(V[self.flat([*others, y], seat + 1)], dtype=float), 1)

        def end_vector(end: TurnEnd) -> np.ndarray:
            if end.kind == "bust":
                return state_vector(opponents, ends.bust_next)
            if end.kind == "win":
                return self._win_vector(r, opponents, ends.x.score + end.total)
            t = min(end.total // u, ends.T)
            y = ends.stop_next[t] if end.kind == "stop" else ends.forced_next[t]
            if y is None:
                return np.zeros(N)
            if y == WIN:
                return self._win_vector(r, opponents, ends.x.score + t * u)
            change = ends.others_after(self.moves, t)
            return state_vector([self.moves.affect_opponent(o, *change) for o in opponents], y)

        cap = ends.T * u  # from this total on, every total ends the turn alike (the DP's horizon)

        def key(node):
            return node if isinstance(node, TurnEnd) or node.total <= cap else node._replace(total=cap)

        # every node before a roll that the options reach, playing the mover's best: one row
        # each of C = P C + B (P: the chance of the next node, B: of the ends' vectors)
        index: dict = {}
        rows: list = []  # per node: [(p, next node key or end vector)]
        todo = [key(o.detail["node"]) for o in options if not isinstance(o.detail["node"], TurnEnd)]
        for node in todo:
            if node in index:
                continue
            index[node] = len(rows)
            row = []
            for faces, p in roll_outcomes(rs, node.dice):
                after = engine.after_roll(node, faces)
                if not isinstance(after, TurnEnd):
                    legal = engine.legal(after)
                    # the mover's best by its own values (the first of equals, as the advice lists them)
                    best = max(legal, key=lambda a, s=after: solved.value(engine, engine.apply(s, a)))
                    after = engine.apply(after, best)
                if isinstance(after, TurnEnd):
                    row.append((p, end_vector(after)))
                else:
                    row.append((p, key(after)))
                    todo.append(key(after))
            rows.append(row)
        n = len(rows)
        P, B = np.zeros((n, n)), np.zeros((n, N))
        for k, row in enumerate(rows):
            for p, nxt in row:
                if isinstance(nxt, np.ndarray):
                    B[k] += p * nxt
                else:
                    P[k, index[nxt]] += p
        C = np.linalg.solve(np.eye(n) - P, B) if n else B

        def node_vector(node) -> np.ndarray:
            return end_vector(node) if isinstance(node, TurnEnd) else C[index[key(node)]]

        return [node_vector(o.detail["node"]) for o in options]

    def _win_vector(self, r: int, opponents, final: int) -> np.ndarray:
        """Every player's chance when the mover reaches the goal with ``final`` points: the
        game's end, or with equal turns the rest of the round (the ``r`` players after the
        mover play their last turns; those before it have played theirs)."""
        out = np.zeros(self.players)
        if not r:
            out[0] = 1.0
            return out
        Y = 0
        for o in opponents[:r]:
            Y = Y * self.m + self.index[o]
        out[: r + 1] = self.last_round().value(r, Y, final)
        return out

    def last_round(self) -> LastRound:
        """The rest of an equal-turns round after a win, to the table's horizon (built once:
        it keeps the chains it has solved)."""
        if self._last_round is None:
            top = int(self.meta["last_turn_horizon"])
            states = [decode(row) for row in self.table.states]
            self._last_round = LastRound(self.rs, kernel.roll_table(self.rs), states, top)
        return self._last_round

    def advise(
        self, me: PlayerState, opponents, *, turn: int = 0, dice: int | None = None, roll=None, seat: int | None = None
    ):
        """The value of every option (:class:`thousand.solvers.advice.Advice`) for ``me`` facing
        ``opponents`` in the order they move next (in ``seat`` under ``equal_turns``)."""
        adv = self.advisor(opponents, seat)
        me = self.moves.check(me)
        roll = tuple(roll) if roll is not None else None
        adv.engine.check_reachable(adv.engine.state(me, turn, dice, roll))
        return adv.advise(me, turn, dice, roll)

    def mixed_state(self, flat: int, weight: float) -> dict:
        """A state where the mover mixes, as JSON: every player's state (the mover first, then
        in the order they move), the mover's seat under equal turns, and the weight: where the
        mover's turn policies, ordered along its bust value, change at a breakpoint, it plays
        the one above with this probability and the one below otherwise (docs/solver.md)."""
        seat, rest = divmod(flat, self.m**self.players)
        rows = [(rest // self.m ** (self.players - 1 - k)) % self.m for k in range(self.players)]
        states = [decode(self.table.states[i]) for i in rows]
        return {
            "scores": [x.score for x in states],
            "states": [x._asdict() for x in states],
            "seat": seat + 1 if self.seats > 1 else None,
            "weight": weight,
        }

    def export(self, path) -> dict:
        """Write the equilibrium for anyone to check (docs/export.md): an ``.npz`` of the
        values (every seat's chance in every state), the player states, the mixed states
        with both policies they mix and the weight, and the rules in full. Written beside,
        then renamed: a reader never sees half a file."""
        import os
        import tempfile

        from thousand.rules.text import dump_toml
        from thousand.solvers.nplayer import NPlayerGame, mixed_options

        path = Path(path)
        mixed = np.array([[k, w] for k, w in self.meta.get("mixed", [])], dtype=np.float64).reshape(-1, 2)
        values = np.asarray(self.table.values, dtype=np.float64)
        options = (
            mixed_options(values, NPlayerGame(self.rs, self.players), mixed[:, 0].astype(np.int64))
            if len(mixed)
            else np.zeros((0, 2, self.players + 1))
        )
        arrays = {
            "values": values,
            "states": np.asarray(self.table.states, dtype=np.int64),
            "fields": np.array(list(self.table.meta.get("state_fields", [])), dtype=str),
            "players": np.int64(self.players),
            "seats": np.int64(self.seats),
            "mixed": mixed,
            "mixed_options": options,
            "certificate": np.float64(self.meta["certificate"]),
            "ruleset": np.array(dump_toml(self.rs.to_mapping())),
        }
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(fh, **arrays)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return {
            "out": str(path),
            "states": int(arrays["values"].shape[0]),
            "players": self.players,
            "bytes": path.stat().st_size,
        }

    def summary(self) -> dict:
        m = self.meta
        fair = self.fair_compensation()
        return {
            "players": self.players,
            "seat_values": [float(v) for v in self.seat_values()],
            "fair_compensation": [
                {"seat": k + 1, "points": c, "p_win": p} for k, (c, p) in zip(self.compensated_seats(), fair)
            ],
            "certificate": m["certificate"],
            "mixed_states": len(m.get("mixed", [])),
            "mixed": [self.mixed_state(int(k), float(w)) for k, w in m.get("mixed", [])],
            "states": m["states"],
            "player_states": m["player_states"],
            "sweeps": m.get("sweeps"),
            "solve_seconds": m["solve_seconds"],
            "peak_memory_mb": m.get("peak_memory_mb"),
            "method": "equilibrium",
            "table": str(self.table.path),
            "solved_now": self.solved_now,
        }

    def _mixed_text(self, shown: int = 4) -> str:
        """A few of the mixed states, in words (``solve --json`` lists them all)."""
        mixed = self.meta.get("mixed", [])
        if not mixed:
            return ""
        some = [self.mixed_state(int(k), float(w)) for k, w in mixed[:shown]]
        text = "; ".join(
            "scores "
            + ", ".join(map(str, d["scores"]))
            + (f" (seat {d['seat']})" if d["seat"] else "")
            + f": weight {d['weight']:.6f}"
            for d in some
        )
        return f" ({text}{'; ...' if len(mixed) > shown else ''})"

    def describe(self) -> str:
        m = self.meta
        how = "solved now" if self.solved_now else "from the stored table"
        # rulesets whose moves lower the score sum sweep the levels more than once
        sweeps = f"{m['sweeps']} sweeps over the levels, " if m.get("sweeps", 1) > 1 else ""
        seats = ", ".join(f"seat {k + 1} {v:.9f}" for k, v in enumerate(self.seat_values()))
        fair = "; ".join(
            f"seat {k + 1} starts with {c} -> {p:.6f}"
            for k, (c, p) in zip(self.compensated_seats(), self.fair_compensation())
        )
        return (
            f"{self.rs.name}, {self.players} players: P(win) by seat with equilibrium play: {seats}\n"
            f"  fair compensation ({'each seat behind' if self.seats > 1 else 'each later seat'} alone, "
            f"closest to 1/{self.players}): {fair}\n"
            f"  certificate (the largest gain of a deviation) {m['certificate']:.1e}; "
            f"{len(m.get('mixed', []))} states where the mover mixes{self._mixed_text()}\n"
            f"  {m['states']:,} states, {sweeps}{m['solve_seconds']:.2f} s ({how})\n  table: {self.table.path}"
        )


def estimate(rs: Ruleset, players: int) -> dict:
    """The states of the N-player game and a time range for its solve, before any work;
    a :class:`thousand.solvers.nplayer.NPlayerError` for what the solver refuses."""
    from thousand.solvers.nplayer import check_size, check_supported, seat_count

    check_supported(rs, players)
    # a stored race table counts the player states a lone player reaches (fewer than with
    # opponents): enough to refuse a game far too large without enumerating its states
    race = find_table(rs, "race", None)
    m = check_size(rs, players, len(race.states) if race is not None else 0)
    n = seat_count(rs, players) * m**players  # equal_turns: the mover's seat in the state
    guess = n * (TURN_DPS_PER_STATE * kernel.turn_seconds(rs, max(1, rs.goal // rs.unit), columns=256) + SECONDS_AROUND)
    from thousand.solvers.nplayer import NPlayerGame

    if NPlayerGame(rs, players).lowers:
        guess *= SWEEPS_FACTOR
    return {"player_states": m, "states": n, "seconds": (guess / ESTIMATE_SPREAD, guess * ESTIMATE_SPREAD)}


def solve_players(
    rs: Ruleset,
    players: int,
    tables_dir: str | os.PathLike | None = None,
    *,
    force: bool = False,
    progress: bool = False,
    cluster: str | None = None,
    checkpoint: str | os.PathLike | None = None,
) -> PlayersSolution:
    """The equilibrium table of ``players`` seats: found on the search path, or solved now
    (refused in one line before any work when the solver cannot) and written atomically.
    ``cluster``: solve it on Dask workers (``"local:N"`` or ``"tcp://HOST:PORT"``,
    :mod:`thousand.solvers.cluster_nplayer`), checkpointing into ``checkpoint`` (default
    ``.partial/`` beside the table), as the duel's ``--cluster`` does."""
    from thousand.base.progress import Progress, duration_text, peak_memory_mb
    from thousand.solvers.nplayer import solve_nplayer

    if players < 3:
        raise StateError(_("--players {0}: two players are the duel (--objective duel)").format(players))
    obj = objective(players)
    if not force:
        table = find_table(rs, obj, tables_dir)
        if table is not None:
            return PlayersSolution(rs, players, table, solved_now=False)
    if cluster is not None:
        return _solve_players_on_cluster(rs, players, tables_dir, cluster, checkpoint, progress)
    if checkpoint is not None:
        raise StateError(_("--checkpoint goes with --cluster"))
    est = estimate(rs, players)
    low, high = est["seconds"]
    if progress and high > 30:
        sys.stderr.write(
            f"solving {rs.name} for {players} players: {est['states']:,} states, roughly "
            f"{duration_text(low)} to {duration_text(high)} here (Ctrl-C stops it; nothing is stored until it is "
            "done)\n"
        )
    bar = Progress(f"solving {rs.name}, {players} players", progress, high)
    try:
        sol = solve_nplayer(rs, players, progress=bar.sweeps)
    finally:
        bar.close()
    extra = {"method": "equilibrium", "peak_memory_mb": peak_memory_mb()}
    return _store_players(rs, players, tables_dir, sol, extra)


def _solve_players_on_cluster(rs, players, tables_dir, cluster, checkpoint, progress) -> PlayersSolution:
    """:func:`solve_players` on a Dask cluster: the duel's ``--cluster`` run
    (:func:`thousand.storage.cluster.on_cluster`) around the N-player equilibrium of
    :func:`thousand.solvers.cluster_nplayer.solve_nplayer_on_cluster`."""
    from thousand.solvers.cluster_nplayer import solve_nplayer_on_cluster
    from thousand.solvers.nplayer import check_supported

    from .cluster import on_cluster

    check_supported(rs, players)

    def solve(client, folder, bar, checkpoint_seconds):
        return solve_nplayer_on_cluster(
            rs,
            players,
            client,
            folder,
            progress=bar.levels,
            checkpoint_seconds=checkpoint_seconds,
            values_path=folder / "values.npy",
        )

    label = _("{0}, {1} players").format(rs.name, players)
    return on_cluster(
        rs,
        objective(players),
        label,
        cluster,
        tables_dir,
        checkpoint,
        progress,
        solve,
        lambda done: _store_players(rs, players, tables_dir, done[0], {"method": "equilibrium"}, done[1], cluster),
    )


def _store_players(rs, players, tables_dir, sol, extra: dict, run=None, spec: str | None = None) -> PlayersSolution:
    """Write the equilibrium ``sol`` as the table of ``players`` seats, after refusing in one
    line one whose certificate or sums fail; ``run``: how a cluster solve ran (its
    :class:`thousand.solvers.cluster_nplayer.NPlayerClusterRun`, on the cluster ``spec``)."""
    from thousand.base.progress import peak_memory_mb
    from thousand.solvers.nplayer import CERTIFICATE, NPlayerError

    obj = objective(players)
    if not sol.certificate <= CERTIFICATE:
        raise NPlayerError(
            _(
                "{0}, {1} players: the equilibrium found has a certificate of {2:.1e} (a deviation "
                "gains that much), above {3}; not stored"
            ).format(rs.name, players, sol.certificate, CERTIFICATE)
        )
    short = float(np.max(np.abs(sol.V.sum(axis=1) - 1.0)))
    if short > CERTIFICATE:
        raise NPlayerError(
            _(
                "{0}, {1} players: in the equilibrium found the game need not end (the players' "
                "chances add up to 1 less {2:.1e} somewhere: waiting costs nothing there, docs/solver.md); "
                "not stored"
            ).format(rs.name, players, short)
        )
    if rs.equal_turns:
        extra_seats = {"last_turn_horizon": int(sol.game.last_round.horizon), "seats": players}
    else:
        extra_seats = {}
    extra = {
        "players": players,
        "states": int(sol.V.shape[0]),
        "player_states": sol.m,
        **extra_seats,
        "certificate": sol.certificate,
        "mixed": [[int(k), float(w)] for k, w in sorted(sol.mixed.items())],
        "iterations": sol.rounds,
        "sweeps": sol.passes,
        "residual": sol.certificate,
        "solve_seconds": sol.seconds,
        "kernel": kernel.IMPLEMENTATION,
        **extra,
        "value_meaning": "P(win) of the player in each place (mover first, then the order of play) for "
        "the state with row c m**N + sum_k x_k m**(N-1-k), c the mover's seat under "
        "equal_turns (else 0)",
    }
    if run is not None:
        from .cluster import cluster_meta

        extra["cluster"] = cluster_meta(spec, run)
        extra["peak_memory_mb"] = peak_memory_mb()
    folder = save_table(Path(write_target(tables_dir)), rs, obj, sol.V, sol.space.encode(), extra)
    from .files import load_table

    return PlayersSolution(rs, players, load_table(folder, rs, obj), solved_now=True)
