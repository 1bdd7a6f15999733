"""The advisor: "roll or stop?" and "which dice do I keep?" from a solved table.

A table stores one value per game state (the value at the start of a turn).
Inside a turn the advisor re-solves that one turn with
:func:`thousand.kernel.turn_dp` (``full=True``), feeding it the stored values
of every state where the turn can end, and reads the value of each option:

* at a decision with ``n`` dice and total ``t``: roll = ``R(t, n)``, stop =
  ``stop[t]`` (where allowed);
* for a given roll: each legal set-aside ``(x, u)`` leads to total ``t + x``
  with ``n - u`` dice, then the best of stopping and rolling on (or the forced
  continuation: a dump, an overshoot, a compulsory roll of hot dice).

Values are shown in the objective's own terms: expected turns (race, lower is
better) or win probability (duel, higher is better).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from thousand import kernel
from thousand.base.errors import StateError
from thousand.base.i18n import N_, _, dice_count
from thousand.engine.ends import TurnEnds
from thousand.engine.player import WIN, Moves, PlayerState
from thousand.engine.turn import TurnEnd, TurnRules
from thousand.rules.ruleset import Ruleset

from .lastturn import LastRound, first_seat_T, last_turn_ends, last_turn_horizon, last_turn_values

__all__ = [
    "SOLVED_KEPT",
    "VALUE_TIE",
    "WORDS",
    "Advice",
    "AheadGame",
    "Option",
    "SolvedTurn",
    "TurnAdvisor",
    "ahead_advisor",
    "duel_advice",
    "duel_advisor",
    "duel_end_values",
    "duels_advisor",
    "geometric_advice",
    "last_turn_advice",
    "last_turn_advisor",
    "memoryless_advisor",
    "nearer",
    "race_advice",
    "race_advisor",
    "rate_advice",
    "rate_advisor",
    "turn_advice",
    "turn_advisor",
]

# the words of a piece of advice, one place for every front end (the static app's advisor.js
# reads them translated from the build, thousand.web.static_build)
WORDS = {
    "keep": N_("keep {dice} (+{points}), then {then}"),
    "roll": N_("roll {n}"),
    "stop": N_("stop"),
    "roll_confirm": N_("roll {n} (hot dice, to confirm)"),
    "roll_compulsory": N_("roll {n} (hot dice, compulsory)"),
    "banked_confirmed": N_("banked at once (confirmed)"),
    "turn_ends": N_("the turn ends ({event})"),
    "dump": N_("dump"),
    "overshoot": N_("overshoot"),
    "instant_win": N_("instant win"),
    "bust": N_("bust: the turn is lost"),
    "cannot_stop": N_("cannot stop: {why}"),
    "no_stop_after": N_("no stop after this roll: {why}"),
    "samosval": N_("banking {t} makes {s}: samosval, the score becomes 0"),
    "barrel_cap": N_("banking {t} stops at the barrel: {score}, not {s}"),
    "headline": N_("{what} — {worth}"),
    "next_best": N_("next best: {what}, {worth}"),
    "worth_win_probability": N_("{p} to win"),
    "worth_estimated_win_probability": N_("≈ {p} to win (estimated)"),
    "worth_duel_product": N_("rated {r}"),
    "worth_expected_turns": N_("{n} turns to the goal on average"),
    "worth_expected_points": N_("{n} points on average"),
    "worth_long_run_points": N_("worth {n} points in the long run"),
    "label_win_probability": N_("chance to win"),
    "label_duel_product": N_("rating (not a chance)"),
    "label_estimated": N_("chance to win, estimated"),
}

VALUE_TIE = 1e-12  # values this close are equal: the solver settles them to about 1e-13
SOLVED_KEPT = 64  # solved turns a TurnAdvisor keeps (one per player state and horizon)


def _percent(p: float) -> str:
    """A chance in per cent, to a tenth where that shows it, else to two significant digits
    (a chance of 8 in a million is not "0.0%")."""
    if p == 0 or p >= 0.001:
        return f"{100 * p:.1f}%"
    return f"{100 * p:.2g}%"


def nearer(p: float, q: float, target: float) -> bool:
    """Whether ``p`` is closer to ``target`` than ``q`` by more than :data:`VALUE_TIE`:
    a head start is preferred only when it is really closer to even, so that two head
    starts worth the same (a tie in exact arithmetic, 1 ulp apart in floats) keep the
    smaller."""
    return abs(p - target) < abs(q - target) - VALUE_TIE


@dataclass
class Option:
    action: str  # "stop", "roll", "keep"
    value: float  # in the objective's terms
    dice: tuple[int, ...] = ()
    points: int = 0
    then: str = ""  # after keeping: "stop", "roll N", "roll N (compulsory)", "dump", ...
    detail: dict = field(default_factory=dict)

    def label(self) -> str:
        if self.action == "keep":
            kept = ",".join(map(str, self.dice))
            return _(WORDS["keep"]).format(dice=kept, points=self.points, then=self.then)
        return self.then or _(self.action)


@dataclass
class Advice:
    objective: str
    value_name: str
    higher_is_better: bool
    state: str
    turn_total: int
    dice: int
    roll: tuple[int, ...] | None
    options: list[Option]
    note: str = ""
    others: list = field(default_factory=list)  # the opponents' names, where options carry every player's chance

    @property
    def best(self) -> Option:
        return self.options[0]

    @property
    def margin(self) -> float | None:
        return abs(self.options[0].value - self.options[1].value) if len(self.options) > 1 else None

    def to_json(self) -> dict:
        return {
            "objective": self.objective,
            "value": self.value_name,
            "value_label": self.value_label(),
            "state": self.state,
            "turn_total": self.turn_total,
            "dice": self.dice,
            "roll": list(self.roll) if self.roll else None,
            "best": self.best.label(),
            "headline": self.headline(),
            "margin": self.margin,
            "note": self.note or None,
            **({"others": list(self.others)} if self.others else {}),
            "options": [
                {
                    "action": o.action,
                    "label": o.label(),
                    self.value_name: o.value,
                    **({"chances": [float(c) for c in o.detail["chances"]]} if "chances" in o.detail else {}),
                    **({"keep": list(o.dice), "points": o.points, "then": o.then} if o.action == "keep" else {}),
                }
                for o in self.options
            ],
        }

    def value_label(self) -> str:
        """The name of the options' values, in words: "chance to win", "expected turns", ..."""
        from thousand.base.objectives import REGISTRY

        labels = {o.value_name: o.value_label for o in REGISTRY.values()}
        # the approximations' values, which are no objective's
        labels.update(duel_product=WORDS["label_duel_product"], estimated_win_probability=WORDS["label_estimated"])
        return _(labels[self.value_name])

    def worth(self, v: float) -> str:
        """A value as a player reads it: "26.6% to win", "≈ 26.6% to win", "3.21 turns", ..."""
        return _(WORDS["worth_" + self.value_name]).format(p=_percent(v), r=f"{v:.4f}", n=f"{v:.2f}")

    def headline(self) -> str:
        """What to do and what it is worth, then the next best option, in one line."""
        best = self.best.label()
        line = _(WORDS["headline"]).format(what=best[:1].upper() + best[1:], worth=self.worth(self.best.value))
        if len(self.options) > 1:
            nxt = self.options[1]
            line += "; " + _(WORDS["next_best"]).format(what=nxt.label(), worth=self.worth(nxt.value))
        return line

    def render(self) -> str:
        head = _("{state}; turn total {t}").format(state=self.state, t=self.turn_total)
        head += (
            _(", roll {roll}").format(roll=",".join(map(str, self.roll)))
            if self.roll
            else _(", {dice} to roll").format(dice=dice_count(self.dice))
        )
        lines = [head]
        if self.note:
            lines.append(self.note)
        width = max(len(o.label()) for o in self.options)
        fmt = (
            "{:.6f}"
            if self.value_name in ("win_probability", "duel_product", "estimated_win_probability")
            else "{:.4f}"
        )
        name = self.value_label()
        best = _("best")
        for k, o in enumerate(self.options):
            mark = best if k == 0 else ""
            lines.append(f"  {mark:{len(best)}}  {o.label():<{width}}  {name} {fmt.format(o.value)}")
            if "chances" in o.detail and self.others:
                theirs = ", ".join(f"{who} {_percent(c)}" for who, c in zip(self.others, o.detail["chances"][1:]))
                lines.append(f"  {'':{len(best)}}  {'':<{width}}  " + _("the others: {chances}").format(chances=theirs))
        if self.margin is not None:
            lines.append("  " + _("margin to the second-best option: {m}").format(m=fmt.format(self.margin)))
        return "\n".join(lines)


class TurnAdvisor:
    """Advice for one player state given the turn-end values of an objective.

    ``values_of(ends)`` returns (stop_val, forced_val, bust_val, win_val) for the
    turn DP; ``show(v)`` converts a DP value to the objective's terms;
    ``horizon(x)`` (points; default :meth:`Moves.saturation`) is the total from
    which every larger one ends the turn alike.

    The options are those of :class:`thousand.engine.TurnRules`; each is valued by
    where it leads: a turn end by its end value, a state before a roll by the
    value of rolling there, ``R(t, n)`` (``RC(t)`` for a confirming roll).
    """

    def __init__(
        self, rs: Ruleset, objective: str, values_of, show, higher_is_better: bool, value_name: str, horizon=None
    ):
        self.rs, self.objective = rs, objective
        self.engine = TurnRules(rs)
        self.moves = self.engine.moves
        self.horizon = horizon or self.moves.saturation
        self.values_of, self.show = values_of, show
        self.higher, self.value_name = higher_is_better, value_name
        self.table = kernel.roll_table(rs)
        self._solved: dict = {}

    def solve_turn(self, x: PlayerState, total: int = 0) -> SolvedTurn:
        """The turn DP of ``x`` with the objective's end values (full tables); the last
        few kept, as the decisions of one turn ask for the same one again."""
        T = max(self.horizon(x), total) // self.rs.unit
        got = self._solved.get((x, T))
        if got is None:
            ends = TurnEnds.of(self.moves, x, T=T)
            stop_v, forced_v, bust_v, win_v = self.values_of(ends)
            tv = kernel.turn_dp(self.table, ends.stop_ok, stop_v, ends.forced_ok, forced_v, bust_v, win_v, full=True)
            got = SolvedTurn(ends, stop_v, forced_v, bust_v, win_v, tv)
            if len(self._solved) >= SOLVED_KEPT:
                self._solved.clear()
            self._solved[(x, T)] = got
        return got

    def advise(
        self,
        x: PlayerState,
        turn_total: int = 0,
        dice: int | None = None,
        roll: tuple[int, ...] | None = None,
        state_label: str | None = None,
    ) -> Advice:
        s = self.engine.state(x, turn_total, dice, roll)
        sol = self.solve_turn(x, s.total)
        notes: list[str] = []
        opts: list[Option] = []
        if s.roll is None:
            # each option's detail names the node of the turn it leads to (its total, for the DP's horizon)
            here = {"node": s, "total": s.total}
            opts.append(
                Option(
                    "roll", self.show(sol.value(self.engine, s)), then=_(WORDS["roll"]).format(n=s.dice), detail=here
                )
            )
            if self.engine.can_stop(s):
                stop = self.engine.stop(s)
                opts.append(
                    Option(
                        "stop",
                        self.show(sol.value(self.engine, stop)),
                        then=_(WORDS["stop"]),
                        detail={**here, "node": stop},
                    )
                )
                notes.append(self.bank_warning(x, s.total))
            elif s.total > 0:
                notes.append(_(WORDS["cannot_stop"]).format(why=self.engine.stop_refusal(s)))
        else:
            after = self.engine.after_roll(s._replace(roll=None), s.roll)
            if isinstance(after, TurnEnd):
                kind = "win" if after.kind == "win" else "bust"
                opts.append(
                    Option(
                        kind,
                        self.show(sol.value(self.engine, after)),
                        then=_(WORDS["instant_win"]) if kind == "win" else _(WORDS["bust"]),
                        detail={"node": after, "total": s.total},
                    )
                )
            else:
                legal = self.engine.legal(after)
                for a in legal:
                    nxt = self.engine.apply(after, a)
                    opts.append(
                        Option(
                            "keep",
                            self.show(sol.value(self.engine, nxt)),
                            dice=a.keep,
                            points=a.points,
                            then=self.then_label(a, nxt),
                            # the engine's action (for a bot that plays the advice) and where it leads
                            detail={"action": a, "node": nxt, "total": s.total},
                        )
                    )
                if not any(a.then in ("stop", "banked (confirmed)") for a in legal):
                    # why no set-aside can be banked: the reason at the largest one's total
                    nxt = self.engine.apply(after, legal[0])
                    if not isinstance(nxt, TurnEnd):
                        notes.append(_(WORDS["no_stop_after"]).format(why=self.engine.stop_refusal(nxt)))
        opts.sort(key=lambda o: -o.value if self.higher else o.value)
        label = state_label or x.describe(self.rs)
        return Advice(
            self.objective,
            self.value_name,
            self.higher,
            label,
            s.total,
            s.dice,
            s.roll,
            opts,
            "; ".join(n for n in notes if n),
        )

    def bank_warning(self, x: PlayerState, t: int) -> str:
        """What banking ``t`` would do that a player may not expect: the barrel cap or
        samosval (read off :meth:`thousand.engine.player.Moves.bank`, where those rules live)."""
        y, s1 = self.moves.bank(x, t), x.score + t
        if y == WIN or y.score == s1:
            return ""
        if y.score == 0 and s1 in self.rs.dump:
            return _(WORDS["samosval"]).format(t=t, s=s1)
        return _(WORDS["barrel_cap"]).format(t=t, score=y.score, s=s1)

    def then_label(self, a, nxt) -> str:
        """What follows the set-aside of action ``a`` (leading to ``nxt``), in words."""
        if a.then == "banked (confirmed)":
            return _(WORDS["banked_confirmed"])
        if isinstance(nxt, TurnEnd):
            return _(WORDS["stop"]) if nxt.kind == "stop" else _(WORDS["turn_ends"]).format(event=_(nxt.event))
        if self.engine.confirming(nxt):
            return _(WORDS["roll_confirm"]).format(n=nxt.dice)
        if self.engine.compulsory(nxt):
            return _(WORDS["roll_compulsory"]).format(n=nxt.dice)
        return _(WORDS["roll"]).format(n=nxt.dice)


@dataclass
class SolvedTurn:
    """One turn solved by the DP: its end values and tables, and the value of any
    node of the turn's state machine (:meth:`value`)."""

    ends: TurnEnds
    stop_v: np.ndarray
    forced_v: np.ndarray
    bust_v: np.ndarray
    win_v: np.ndarray
    tv: kernel.TurnValues

    def value(self, engine: TurnRules, node, col: int = 0) -> float:
        """The DP value (column ``col``) of a turn end or of a state before a roll:
        ``stop[t]``, ``forced[t]``, ``Z``, ``W``; or ``RC(t)`` before a confirming
        roll, else ``R(t, n)``."""
        T, u = self.ends.T, engine.rs.unit
        if isinstance(node, TurnEnd):
            if node.kind == "stop":
                return float(self.stop_v[min(node.total // u, T), col])
            if node.kind == "forced":
                return float(self.forced_v[min(node.total // u, T), col])
            return float((self.win_v if node.kind == "win" else self.bust_v)[col])
        row = self.tv.row(node.total // u)
        if engine.confirming(node):
            return float(self.tv.RC[row, col])
        return float(self.tv.R[row, node.dice, col])


def turn_advisor(rs: Ruleset) -> TurnAdvisor:
    """Advice for the objective ``turn``: values are the expected points this turn banks
    (a bank is worth its turn total, a bust, a dump or an overshoot 0, an instant win the
    points still missing to the goal). No table needed."""

    def values_of(ends: TurnEnds):
        u = rs.unit
        stop = (np.arange(ends.T + 1) * float(u))[:, None] * (ends.stop_ok[:, None] != 0)
        return stop, np.zeros((ends.T + 1, 1)), np.zeros(1), np.array([float(max(rs.goal - ends.x.score, 0))])

    from .turn import expected_turn_points

    # totals are unbounded: the DP runs to the horizon the objective's own solve converged at
    return TurnAdvisor(
        rs, "turn", values_of, float, True, "expected_points", horizon=lambda x: expected_turn_points(rs, x).T * rs.unit
    )


def rate_advisor(rate) -> TurnAdvisor:
    """Advice for the objective ``rate`` (a :class:`thousand.solvers.rate.RateSolution`): an option's
    value is this turn's points plus the relative value of the zero-turn counter it leaves,
    ``t + h(bank(c))`` for a bank and ``r_zero(c) + h(zero(c))`` for a zero turn, so the
    options of one decision compare by their long-run worth. No table needed."""
    from .rate import rate_end_values

    def values_of(ends: TurnEnds):
        stop, bust = rate_end_values(rate, ends.x.bolts, ends.T)
        return stop, np.zeros((ends.T + 1, 1)), bust, np.zeros(1)

    return TurnAdvisor(
        rate.rs, "rate", values_of, float, True, "long_run_points", horizon=lambda x: rate.T * rate.rs.unit
    )


def race_advisor(solution) -> TurnAdvisor:
    """Advice from a race table: values are minus the expected turns after this turn."""

    def J(y) -> float:
        return 0.0 if y == WIN else -solution.value(y)

    def values_of(ends: TurnEnds):
        stop = np.array([J(y) if y is not None else 0.0 for y in ends.stop_next])[:, None]
        forced = np.array([J(y) if y is not None else 0.0 for y in ends.forced_next])[:, None]
        return stop, forced, np.array([J(ends.bust_next)]), np.zeros(1)

    return TurnAdvisor(solution.rs, "race", values_of, lambda v: 1.0 - float(v), False, "expected_turns")


def duel_end_values(solution, ends: TurnEnds, opponents: list[PlayerState], seat: int | None = None):
    """The duel's turn-end values of mover ``ends.x`` against each of ``opponents``.

    Returns ``(vals, bust)``: ``vals[t, k]`` = 1 if ending the turn at total t
    wins, else ``1 - P(y_t, x_t)`` with ``x_t`` the mover after the end and
    ``y_t`` opponent k after push-off and overtaking (an overshoot leaves the
    opponent as is); ``bust[k] = 1 - P(y, zero(x))``.

    With equal_turns, ``seat`` is the mover's (0 first, 1 second), ``P`` the
    other seat's table, and a first-seat win with final total ``F`` is worth
    ``1 - L(y, min(F, horizon))`` (:func:`thousand.solvers.lastturn.last_turn_values`; the
    table's horizon), a second-seat win 1."""
    moves = Moves(solution.rs)
    x = ends.x
    rs = solution.rs
    if solution.seated:
        if seat not in (0, 1):
            raise StateError(
                _("{0} plays equal turns: the duel needs the mover's seat (first or second)").format(rs.name)
            )
        horizon = solution.last_turn_horizon
    P = solution.opponent_values(seat if solution.seated else None)
    idx = solution.index
    yi = np.array([solution.state_index(y) for y in opponents])
    # without overtaking or push-off a bank leaves the opponent as is (and skipping
    # the per-opponent calls keeps whole-table uses, like the charts, fast)
    interacts = bool(rs.overtake) or (rs.barrel.kind != "none" and rs.barrel.push_off != "none")
    vals = np.zeros((ends.T + 1, len(opponents)))
    last = None
    if solution.seated and seat == 0:  # L(y, F) for every final total F this turn can reach
        u = rs.unit
        F = np.minimum(x.score + np.arange(ends.T + 1) * u, horizon)
        targets = np.arange(rs.goal, max(horizon, rs.goal) + 1, u)
        table = kernel.roll_table(rs)
        last = np.array([last_turn_values(rs, table, y, targets) for y in opponents]).reshape(len(opponents), -1)
        last_col = np.clip((F - rs.goal) // u, 0, len(targets) - 1)
    for t in range(1, ends.T + 1):
        x2 = ends.stop_next[t] if ends.stop_ok[t] else ends.forced_next[t]
        if x2 is None:
            continue
        if x2 == WIN:
            # a first-seat win leaves each opponent, as it stands, one last turn
            vals[t] = 1.0 if last is None else 1.0 - last[:, last_col[t]]
            continue
        y2 = yi
        if interacts and ends.forced_event[t] != "overshoot":
            before, after, climbed = x.score, moves.raised_to(x, t * moves.rs.unit), moves.climbed(x, x2)
            y2 = np.array([idx[moves.affect_opponent(y, before, after, climbed)] for y in opponents])
        vals[t] = 1.0 - P[y2, idx[x2]]
    return vals, 1.0 - P[yi, idx[ends.bust_next]]


def duel_advisor(
    solution, opponent: PlayerState, seat: int | None = None, value_name: str = "win_probability"
) -> TurnAdvisor:
    """Advice from a duel table against ``opponent``: values are win probabilities
    (or, from a :class:`thousand.solvers.geometric.GeometricDuel`, the approximation's estimates:
    ``value_name``).
    With equal_turns, ``seat`` is the mover's (0 first, 1 second); a first-seat
    turn runs to the table's horizon (it may roll on past the goal to raise its
    final total)."""
    solution.state_index(opponent)
    horizon = None
    if solution.seated:
        if seat not in (0, 1):
            raise StateError(
                _("{0} plays equal turns: the duel needs the mover's seat (first or second)").format(solution.rs.name)
            )
        if seat == 0:
            moves, top = Moves(solution.rs), solution.last_turn_horizon
            horizon = lambda x: first_seat_T(solution.rs, moves, x, top) * solution.rs.unit  # noqa: E731

    def values_of(ends: TurnEnds):
        vals, bust = duel_end_values(solution, ends, [opponent], seat)
        return vals, vals, bust, np.ones(1)

    return TurnAdvisor(solution.rs, "duel", values_of, float, True, value_name, horizon=horizon)


def duels_advisor(solution, opponents: list[PlayerState], combination: str = "product") -> TurnAdvisor:
    """Advice for three players and more from the mover's duel chances against each
    opponent (:mod:`thousand.solvers.approx`, methods ``product`` and ``odds``): the value of
    an end is the chances ``1 - P(y_j', x')`` (each opponent after overtaking and push-off
    as in the duel) combined by :func:`thousand.solvers.approx.combine_duels`. An
    approximation: the product's values rank the options but are not win probabilities;
    the odds' estimate the chance to win. Their measured cost is in docs/results.md."""
    from .approx import combine_duels

    for y in opponents:
        solution.state_index(y)
    if solution.table.values.ndim == 3:
        raise StateError(
            _("{0} plays equal turns: the product of duels is for games that end at the first win").format(
                solution.rs.name
            )
        )

    def values_of(ends: TurnEnds):
        vals, bust = duel_end_values(solution, ends, list(opponents))
        stop = combine_duels(vals, combination)[:, None]
        return stop, stop, combine_duels(bust, combination)[None], np.ones(1)

    name = "duel_product" if combination == "product" else "estimated_win_probability"
    return TurnAdvisor(solution.rs, "duel", values_of, float, True, name)


class AheadGame:
    """What the lookahead ``ahead`` (:class:`thousand.solvers.approx.LookaheadDecider`) reads
    for a ruleset's games of ``players``: the N-player game over the player states (their
    turns' ends and what they do to the others) and the duel table's chances between every
    two of them. Built once per ruleset (seconds and some 2 GB for the 1000 presets: every
    end's effect on every opponent state); no N-player table."""

    def __init__(self, solution, players: int):
        from .approx import LookaheadDecider, duel_matrix
        from .nplayer import NPlayerGame

        self.rs = solution.rs
        self.game = NPlayerGame(solution.rs, players)
        self.decider = LookaheadDecider(self.game, duel_matrix(self.game.space, solution), players - 1, whole=False)

    def index(self, x: PlayerState) -> int:
        try:
            return self.game.space.lookup(Moves(self.rs).normalise(x))
        except KeyError:
            raise StateError(_("no such game state in the table: {0}").format(x.describe(self.rs))) from None


def ahead_advisor(ahead: AheadGame, opponents: list[PlayerState]) -> TurnAdvisor:
    """Advice for three players from the others' next turns played out with the dice
    exact, each by the duels' odds, and the odds after them (:mod:`thousand.solvers.approx`,
    method ``ahead``): the value of an end is the mover's estimated chance to win once every
    opponent has taken its next turn. Its measured cost is in docs/results.md."""
    game = ahead.game
    if len(opponents) != game.N - 1:
        given = len(opponents) + 1
        raise StateError(_("{0} players were given, the lookahead was built for {1}").format(given, game.N))
    rest = 0
    for y in opponents:
        rest = rest * game.m + ahead.index(y)

    def values_of(ends: TurnEnds):
        i = ahead.index(ends.x)
        # the game's turns end where the advisor's do (the same player states, the same horizon)
        stop, bust, win = ahead.decider.decide(i, np.array([rest], dtype=np.int64))
        return stop, stop, bust, win

    return TurnAdvisor(ahead.rs, "duel", values_of, float, True, "estimated_win_probability")


def memoryless_advisor(geo, opponents: list[PlayerState], seat: int | None = None) -> TurnAdvisor:
    """Advice for three players and more by the memoryless-opponent approximation
    (:mod:`thousand.solvers.approx`, method ``memoryless``) from a
    :class:`thousand.solvers.geometric.GeometricDuel`: an end that leaves the mover in ``x'`` and
    the opponents in ``y'`` is worth ``D V_q(x')``, ``D = prod_j (1 - 1/N(y'_j))``, ``q = 1 - D``.
    Under ``equal_turns`` the mover's ``seat`` (0 = the first) is needed: a win before the
    last seat is worth its exact chance in the rest of the round
    (:class:`thousand.solvers.lastturn.LastRound` over the opponents still to play), and such a turn
    runs to the horizon of their last turns. An approximation: its values are estimates."""
    rs = geo.rs
    moves = Moves(rs)
    opponents = [moves.check(y) for y in opponents]
    N = len(opponents) + 1
    if rs.equal_turns and (seat is None or not 0 <= seat < N):
        raise StateError(
            _("{name} plays equal turns: say which seat you move in, --seat first, second, ... (of {n})").format(
                name=rs.name, n=N
            )
        )
    r = N - 1 - seat if rs.equal_turns else 0  # the seats a win leaves their last turns

    def worth(x: PlayerState, ys) -> float:
        D = np.prod(geo.survival([geo.state_index(y) for y in ys]))
        return float(geo.against(np.array([geo.state_index(x)]), np.array([D]))[0])

    horizon, win_value = None, (lambda F: 1.0)
    if r:
        later = tuple(opponents[:r])
        table = kernel.roll_table(rs)
        top = last_turn_horizon(rs, table, list(later))
        rest = LastRound(rs, table, list(later), top)
        chain = rest.chain(later, 1)
        win_value = lambda F: float(chain[rest.target_index(F), 0, 0])  # noqa: E731
        horizon = lambda x: first_seat_T(rs, moves, x, top) * rs.unit  # noqa: E731

    def values_of(ends: TurnEnds):
        def at(t, y):
            if y is None:
                return 0.0
            if y == WIN:
                return win_value(max(ends.x.score + t * rs.unit, rs.goal))
            change = ends.others_after(moves, t)
            return worth(y, [moves.affect_opponent(o, *change) for o in opponents])

        stop = np.array([at(t, y) for t, y in enumerate(ends.stop_next)])[:, None]
        forced = np.array([at(t, y) for t, y in enumerate(ends.forced_next)])[:, None]
        return stop, forced, np.array([worth(ends.bust_next, opponents)]), np.ones(1)

    return TurnAdvisor(rs, "duel", values_of, float, True, "estimated_win_probability", horizon=horizon)


def last_turn_advisor(rs: Ruleset, to_beat: int, tied: int = 1, later=()) -> TurnAdvisor:
    """Advice for a last turn of an equal_turns game, the top final total being
    ``to_beat`` points, shared by ``tied`` players, with the players ``later`` (their
    states, in seat order) still to play their last turns after this one: values are the
    probability of winning (a tie at the top among k players worth 1/k;
    :class:`thousand.solvers.lastturn.LastRound`, which plays the later turns as each of them
    maximises its own chance; with nobody after and one leader this is the second seat's
    last turn of the duel, :func:`thousand.solvers.lastturn.last_turn_values`). No table needed."""
    if not rs.equal_turns:
        raise StateError(_("{0} does not play equal turns: there is no last turn to beat a total in").format(rs.name))
    u = rs.unit
    if to_beat % u or to_beat < rs.goal:
        raise StateError(
            _(
                "--to-beat {0}: the first player finished with a total of at least the goal {1}, a multiple of {2}"
            ).format(to_beat, rs.goal, u)
        )
    if rs.barrel.kind == "exact" and to_beat != rs.goal:
        raise StateError(
            _("--to-beat {0}: on an exact barrel every finished total is the goal {1}").format(to_beat, rs.goal)
        )
    if tied < 1:
        raise StateError(_("--tied {0}: at least the player who finished holds the total to beat").format(tied))
    moves = Moves(rs)
    later = [moves.check(y) for y in later]
    table = kernel.roll_table(rs)
    # the later players' totals are told apart up to a horizon of their own (and the total to beat)
    top = max(last_turn_horizon(rs, table, later), to_beat) if later else to_beat
    after = LastRound(rs, table, later, top).chain(tuple(later), tied + 1)  # (targets, tied + 1, ...)
    f_beat = (to_beat - rs.goal) // u

    def values_of(ends: TurnEnds):
        G = ends.x.score + np.arange(ends.T + 1) * u
        win = np.array([z == WIN for z in ends.stop_next], dtype=bool) & (ends.stop_ok != 0)
        new_top = after[np.clip((np.minimum(G, top) - rs.goal) // u, 0, len(after) - 1), 0, 0]
        stop = np.where(win & (G > to_beat), new_top, np.where(win & (G == to_beat), after[f_beat, tied, 0], 0.0))
        return stop[:, None], np.zeros((ends.T + 1, 1)), np.zeros(1), np.ones(1)

    return TurnAdvisor(
        rs, "duel", values_of, float, True, "win_probability", horizon=lambda x: last_turn_ends(moves, x, top).T * u
    )


# ---- the advisors as the objective registry (thousand.base.objectives) calls them:
# f(solution, opponents, seat, **situation), whatever each one reads


def turn_advice(solution, opponents=(), seat=None) -> TurnAdvisor:
    """The ``turn`` objective's advisor (it reads the rules only)."""
    return turn_advisor(solution.rs)


def rate_advice(solution, opponents=(), seat=None) -> TurnAdvisor:
    """The ``rate`` objective's advisor (the solve's relative values)."""
    return rate_advisor(solution.rate)


def race_advice(solution, opponents=(), seat=None) -> TurnAdvisor:
    """The ``race`` objective's advisor (the race table; the opponents play no part)."""
    return race_advisor(solution)


def duel_advice(solution, opponents, seat=None) -> TurnAdvisor:
    """The ``duel`` objective's advisor: the duel table against the one opponent."""
    if len(opponents) != 1:
        raise StateError(_("a duel is against one opponent, not {0}").format(len(opponents)))
    return duel_advisor(solution, opponents[0], seat)


def geometric_advice(solution, opponents, seat=None) -> TurnAdvisor:
    """The ``geometric`` objective's advisor: the opponents as one memoryless opponent."""
    return memoryless_advisor(solution, list(opponents), seat)


def last_turn_advice(solution, opponents=(), seat=None, *, to_beat: int, tied: int = 1) -> TurnAdvisor:
    """The ``last turn`` objective's advisor: ``solution`` is the ruleset (no table), the
    ``opponents`` those still to play their last turns after this one."""
    rs = getattr(solution, "rs", solution)
    return last_turn_advisor(rs, to_beat, tied, tuple(opponents))
