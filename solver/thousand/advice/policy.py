"""The one place that decides how a decision is advised, and says so in a player's words.

:class:`Advisor` takes a :class:`~thousand.advice.situation.Situation` and answers with
:class:`Part` s: the advice (every option with its value, the best first), whether it is
exact, the method in sentences and, for an approximation, its measured cost on games of
the same kind (:mod:`thousand.advice.costs`). The command line, the scorekeeper, the web
page and the review all ask it; none of them chooses a method or writes a label.

The policy:

* a last turn of an equal-turns round: exact, always (it needs no table);
* one opponent: the exact duel where its table is stored or cheap to solve; where the duel
  cannot be held on this machine, the estimate with the smaller measured loss on games of
  the same kind (the memoryless opponent, else the race);
* two opponents or more: the exact equilibrium of that many players where its table is
  stored or cheap; else, of the approximations this machine can give (read off the duel
  table; with equal turns the race or the memoryless opponent), the one with the smallest
  measured loss on games of the same kind;
* no opponent (the command line's ``--objective race``, ``rate``, ``turn``): that objective.

A front end's ``mode`` may ask for the duel or the race only (``auto`` decides as above).
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from thousand.base.i18n import _
from thousand.base.objectives import objective as objective_named
from thousand.rules.ruleset import Ruleset
from thousand.solvers.advice import Advice

from .costs import Cost, least_in_family, least_where_all, measured_cost
from .situation import Situation

__all__ = ["SMALL_DUEL", "SMALL_DUEL_EQUAL_TURNS", "Advisor", "Part", "advice_json", "advice_text"]

SMALL_DUEL = 300  # player states up to which a missing duel table is solved on request (seconds)
# the same with equal_turns: the first seat's turns run to the final-total horizon (thousands of
# points with six dice), so a solve costs many times more (93 six-dice states: 24 s)
SMALL_DUEL_EQUAL_TURNS = 100
AHEAD_PLAYERS = 3  # the lookahead over the others' turns is computed at a decision for three players (with
# four, the states their three turns reach are some hundred times more)
ADVISORS_KEPT = 4096  # turn advisors an Advisor keeps (each with its few solved turns)


class Part(NamedTuple):
    """One method's answer: its heading (the method in words, or why it is missing), the
    advice (None where the heading says why there is none), whether it is exact, and the
    method's short name (``duel``, ``equilibrium``, ``last turn``, ``product``,
    ``strongest``, ``memoryless``, ``race``, ``alone race``, ... ; ``missing`` for a reason)."""

    heading: str
    advice: Advice | None
    exact: bool
    method: str = ""


def _solve_here(rs: Ruleset, kind: str, tables_dir: str | None):
    from thousand.storage.solve import solve_objective

    return solve_objective(rs, kind, tables_dir, progress=True)


class Advisor:
    """Advice for the player to move, from the tables the rules have (solved on request)."""

    def __init__(
        self,
        rs: Ruleset,
        mode: str = "auto",
        tables_dir: str | None = None,
        solver=None,
        on_request: bool = False,
        chances: bool = True,
        lookahead: bool = True,
    ):
        """``solver(rs, kind, tables_dir)`` gives a table's solution (default: found or solved
        now, with progress on stderr; the web page solves in the background). ``on_request``:
        a missing table is built when the user asks for it (the web page's build button), so
        the reasons name no command to type. ``chances``: the exact advice of three players or
        more gives every player's chance after each option (a bot, which plays the best option
        only, does without). ``lookahead``: three players of the 1000 rules may be advised by
        the lookahead over the others' next turns, which takes some 2 GB and a few seconds to
        prepare and up to seconds a decision (the web server, which answers each phone at
        once, does without)."""
        self.rs, self.mode, self.tables_dir = rs, mode, tables_dir
        self.chances, self.lookahead = chances, lookahead
        self.solver = solver or _solve_here
        self.on_request = on_request
        self._estimates: dict = {}  # table kind -> the solve's estimate, or why the solver refuses it
        self._sol: dict = {}
        self._advisors: dict = {}
        self._lookahead: dict = {}  # players -> the lookahead's game (AheadGame), built at first use

    # ------------------------------------------------------------ the tables at hand

    def solution(self, kind: str):
        if kind not in self._sol:
            self._sol[kind] = self.solver(self.rs, kind, self.tables_dir)
        return self._sol[kind]

    def duel_available(self) -> tuple[bool, str]:
        """Whether the duel table can be used now (found, or small enough to solve in seconds)."""
        from thousand.storage.files import find_table

        if "duel" in self._sol or find_table(self.rs, "duel", self.tables_dir) is not None:
            return True, ""
        est = self.estimate("duel")  # the player states listed once (up to the solver's limit), and kept
        n = est["player_states"]
        if n <= (SMALL_DUEL_EQUAL_TURNS if self.rs.equal_turns else SMALL_DUEL):
            return True, ""
        why = (
            _("the exact two-player table of these rules is not solved yet (at least {n:,} player states)")
            if est.get("exceeded")
            else _("the exact two-player table of these rules is not solved yet ({n:,} player states)")
        ).format(n=n)
        return False, why + self.how_to_build("duel")

    def players_available(self, players: int) -> tuple[bool, str]:
        """Whether the exact equilibrium of ``players`` seats can be used now: its table is
        found, or the solver takes the ruleset and it is small enough to solve in seconds."""
        from thousand.solvers.nplayer import NPlayerError
        from thousand.storage.files import find_table
        from thousand.storage.players import SMALL_GAME

        kind = objective_named("players").kind(players)
        if kind in self._sol or find_table(self.rs, kind, self.tables_dir) is not None:
            return True, ""
        try:
            states = self.estimate(kind)["states"]
        except NPlayerError as exc:
            return False, str(exc)
        if states <= SMALL_GAME:
            return True, ""
        why = _("the exact table of {n} players is not solved yet ({states:,} states)").format(n=players, states=states)
        return False, why + self.how_to_build(kind)

    def estimate(self, kind: str) -> dict:
        """What a solve of the table ``kind`` would cost here, asked once per kind; a
        :class:`thousand.solvers.nplayer.NPlayerError` for a game the N-player solver refuses."""
        from thousand.solvers.nplayer import NPlayerError
        from thousand.storage.solve import estimate

        if kind not in self._estimates:
            try:
                self._estimates[kind] = estimate(self.rs, kind)
            except NPlayerError as exc:
                self._estimates[kind] = str(exc)
        got = self._estimates[kind]
        if isinstance(got, str):
            raise NPlayerError(got)
        return got

    def how_to_build(self, kind: str) -> str:
        """The end of a missing table's reason: how long a build takes, and on the command line
        the command that builds it; a table too large for one machine says so instead."""
        from thousand.base.objectives import table_kind

        est = self.estimate(kind)
        if est.get("exceeded"):
            return "; " + _("too large to solve on this machine")
        sec = est["seconds"][1]
        text = "; " + (
            _("about {n} s to solve on this machine").format(n=round(sec))
            if sec < 120
            else _("about {n} min to solve on this machine").format(n=round(sec / 60))
        )
        if self.on_request:
            return text
        obj, players = table_kind(kind)
        cmd = f"thousand solve {self.rs.name} {obj.solve_options(players)}"
        return text + "; " + _("solve it with `{cmd}`").format(cmd=cmd)

    # ------------------------------------------------------------ the policy

    def advise(self, sit: Situation, objective: str | None = None) -> list[Part]:
        """The advice for ``sit`` (the module docstring's policy); ``objective`` names one
        for a player alone (``race``, ``rate``, ``turn``), asked for on the command line."""
        self._check(sit)
        if objective is not None and not objective_named(objective).opponents:
            return [self._alone(sit, objective)]
        if sit.last_turn:
            return [self._last_turn(sit)]
        if self.mode == "race" or not sit.opponents:
            return [self._race(sit, alone=not sit.opponents)]
        if sit.players > 2:
            return self._several(sit)
        return self._duel(sit)

    def _check(self, sit: Situation) -> None:
        from thousand.engine.turn import TurnRules

        engine = TurnRules(self.rs)
        engine.check_reachable(engine.state(sit.me, sit.turn_total, sit.dice, sit.roll))

    def _give(self, adv, sit: Situation) -> Advice:
        return adv.advise(sit.me, sit.turn_total, sit.dice, sit.roll, state_label=sit.label())

    def _kept(self, key: tuple, make):
        """The turn advisor ``make()`` for ``key`` (a method and what it reads of the
        situation), kept: a bot or a review asks about the same situations again and again,
        and a kept advisor keeps its solved turns."""
        adv = self._advisors.get(key)
        if adv is None:
            if len(self._advisors) >= ADVISORS_KEPT:
                self._advisors.clear()
            adv = self._advisors[key] = make()
        return adv

    def _alone(self, sit: Situation, objective: str) -> Part:
        """A player alone, by the objective asked for: its exact advice, and what it optimises."""
        obj = objective_named(objective)
        sol = self.solution(obj.name) if obj.stored else obj.solve(self.rs, self.tables_dir, progress=True)
        adv = self._give(obj.advisor(sol, (), None), sit)
        head = _("Alone: {what}.").format(what=_(obj.meaning))
        if getattr(sol, "rate", None) is not None:  # the long run's worth, which the options are measured against
            head += " " + _("At best {gain} points a turn in the long run.").format(gain=f"{sol.rate.gain:.2f}")
        return Part(head, self._rounded(sol, adv), True, f"alone {obj.name}")

    def _last_turn(self, sit: Situation) -> Part:
        adv = self._kept(
            ("last turn", sit.opponents, sit.to_beat, sit.tied),
            lambda: objective_named("last turn").advisor(
                self.rs, sit.opponents, None, to_beat=sit.to_beat, tied=sit.tied
            ),
        )
        head = self.last_turn_heading(sit.to_beat, sit.tied, len(sit.opponents))
        return Part(head, self._give(adv, sit), True, "last turn")

    @staticmethod
    def last_turn_heading(to_beat, tied, later: int) -> str:
        """The last turn's method in words: the total to beat, held by ``tied`` players,
        ``later`` players still to play after this one."""
        if not later and tied == 1:
            return _("Exact: your last turn, to beat {total}; a tie counts half.").format(total=to_beat)
        return _(
            "Exact: your last turn of the round, to beat {total} (held by {k}), {n} still to play after you; "
            "a tie at the top is shared."
        ).format(total=to_beat, k=tied, n=later)

    def _duel(self, sit: Situation) -> list[Part]:
        """One opponent: the exact duel, else the best measured estimate."""
        rs = self.rs
        ok, why = (True, "") if self.mode == "duel" else self.duel_available()
        if ok:
            from thousand.storage.solve import DuelTooLarge

            try:
                sol = self.solution("duel")
            except DuelTooLarge as too_large:  # the duel does not fit this machine
                ok, why = False, str(too_large)
        if ok:
            seat = sit.seat if rs.equal_turns else None
            made = self._kept(
                ("duel", sit.opponents, seat), lambda: objective_named("duel").advisor(sol, sit.opponents, seat)
            )
            adv = self._give(made, sit)
            return [Part(self.duel_heading(sit.called(1)), self._rounded(sol, adv), True, "duel")]
        missing = Part(_("No exact advice: {why}.").format(why=why), None, False, "missing")
        return [missing, self._estimate_one(sit)]

    def _estimate_one(self, sit: Situation) -> Part:
        """Two players without the duel's table: the memoryless opponent or the race,
        whichever measured the smaller loss on games of this kind (the memoryless opponent
        where neither was measured: it sees the opponent)."""
        costs = {m: measured_cost(m, self.rs, 2) for m in ("geometric", "race")}
        method = _least(costs, default="geometric")
        if method == "race":
            return self._race(sit, cost=costs["race"])
        geo = self.solution("geometric")
        seat = sit.seat if self.rs.equal_turns else None
        adv = self._give(objective_named("duel").advisor(geo, sit.opponents, seat), sit)
        adv.value_name = "estimated_win_probability"
        head = _(
            "Estimate: the opponent taken as one who wins each of their turns with a fixed chance (from how "
            "many turns they need alone). {cost}"
        ).format(cost=_cost_words(costs["geometric"]))
        return Part(head, adv, False, "memoryless")

    def _several(self, sit: Situation) -> list[Part]:
        """Two opponents or more: the exact equilibrium, else the best measured approximation."""
        N = sit.players
        if self.mode != "race":
            ok, why = self.players_available(N)
            if ok:
                kind = objective_named("players").kind(N)
                made = self._kept(
                    (kind, sit.opponents, sit.seat),
                    lambda: objective_named("players").advisor(self.solution(kind), sit.opponents, sit.seat),
                )
                adv = self._give(made, sit)
                if self.chances:  # every player's chance after each option, the mover's first
                    table = self.solution(kind)
                    for option, c in zip(
                        adv.options, table.option_chances(made, sit.me, sit.opponents, sit.seat, adv.options)
                    ):
                        option.detail["chances"] = c
                    adv.others = [sit.called(k + 1) for k in range(len(sit.opponents))]
                head = _("Exact: the best play against {n} players who all play their best.").format(n=N - 1)
                return [Part(head, adv, True, "equilibrium")]
            missing = Part(_("No exact advice: {why}.").format(why=why), None, False, "missing")
            if self.rs.equal_turns:
                return [missing, self._estimate_equal_turns(sit)]
            duel_ok, note = (True, "") if self.mode == "duel" else self.duel_available()
            if duel_ok:
                return [missing, self._estimate_from_duels(sit)]
            return [
                missing,
                Part(_("No estimate from the two-player table: {why}.").format(why=note), None, False, "missing"),
                self._race(sit, cost=measured_cost("race", self.rs, N)),
            ]
        return [self._race(sit, cost=measured_cost("race", self.rs, N))]

    def _estimate_from_duels(self, sit: Situation) -> Part:
        """The approximations read off the duel table: the duels' odds combined, their
        product, or the duel against the strongest opponent, whichever measured the smallest
        worst loss on games of this kind."""
        from thousand.solvers.advice import duel_advisor, duels_advisor

        method = self.duels_method(sit.players)
        sol = self.solution("duel")
        if method == "ahead":
            from thousand.solvers.advice import AheadGame, ahead_advisor

            ahead = self._lookahead.get(sit.players)
            if ahead is None:
                if self.on_request is False:
                    print(_("Preparing the lookahead over the next turns (once per ruleset)..."), file=sys.stderr)
                ahead = self._lookahead[sit.players] = AheadGame(sol, sit.players)
            made = self._kept(("ahead", sit.opponents), lambda: ahead_advisor(ahead, list(sit.opponents)))
            adv = self._give(made, sit)
            return Part(self.duels_heading(sit.players, method), self._rounded(sol, adv), False, method)
        if method == "strongest":
            j = min(range(len(sit.opponents)), key=lambda k: sol.value(sit.me, sit.opponents[k]))
            adv = self._give(duel_advisor(sol, sit.opponents[j]), sit)
            adv.value_name = "estimated_win_probability"
            head = self.duels_heading(sit.players, method, strongest=sit.called(j + 1))
            return Part(head, self._rounded(sol, adv), False, method)
        adv = self._give(duels_advisor(sol, list(sit.opponents), method), sit)
        return Part(self.duels_heading(sit.players, method), self._rounded(sol, adv), False, method)

    def duel_heading(self, other: str) -> str:
        """The exact duel's method in words, against ``other`` (a name, "your opponent")."""
        return (
            _("Exact: the best play against {other}, who also plays their best (equal turns).")
            if self.rs.equal_turns
            else _("Exact: the best play against {other}, who also plays their best.")
        ).format(other=other)

    def duels_method(self, players: int, lookahead: bool = True) -> str:
        """Which approximation built on the duel table advises ``players`` seats: ``odds``,
        ``product``, ``strongest`` or (three players of the 1000 games; ``lookahead``: where
        the front end can compute it) ``ahead``, whichever measured the smallest worst loss
        on games of this kind, compared where all were measured (where none was, the
        family's best of the first three; where nothing is measured, the odds)."""
        costs = self._duels_costs(players, lookahead)
        known = tuple(m for m, c in costs.items() if c is not None)
        read = tuple(m for m in costs if m != "ahead")
        method = (
            least_where_all(known, self.rs, players)  # compared on the games where all were measured
            or _least(costs, default="odds" if known else least_in_family(read, self.rs) or "odds")
        )
        return "strongest" if method == "duel" else method

    def _duels_costs(self, players: int, lookahead: bool = True) -> dict:
        from thousand.solvers.approx import interacting

        # the lookahead where the duel methods lose most, the 1000 games (their moves change the
        # other players); elsewhere the odds lose little, and a decision would cost seconds
        ahead = lookahead and self.lookahead and players == AHEAD_PLAYERS and interacting(self.rs)
        methods = ("odds", "product", "duel") + (("ahead",) if ahead else ())
        return {m: measured_cost(m, self.rs, players) for m in methods}

    def duels_heading(self, players: int, method: str, strongest: str = "") -> str:
        """The approximation ``method`` (of :meth:`duels_method`) in words, with its measured
        cost; ``strongest`` names the opponent the duel is played against."""
        costs = self._duels_costs(players)
        if method == "strongest":
            return _(
                "Estimate: as a duel against the strongest opponent, {name} (your two-player chance is lowest "
                "against them), the others left aside. {cost}"
            ).format(name=strongest, cost=_cost_words(costs["duel"]))
        if method == "ahead":
            return _(
                "Estimate: each opponent's next turn played out, every roll of the dice counted, then your "
                "two-player chances against each of them, combined as in a race where each player finishes at a "
                "steady rate. {cost}"
            ).format(cost=_cost_words(costs["ahead"]))
        if method == "odds":
            return _(
                "Estimate: your two-player chances against each opponent, combined as in a race where each "
                "player finishes at a steady rate. {cost}"
            ).format(cost=_cost_words(costs["odds"]))
        return _(
            "Estimate: your two-player chances against each opponent, multiplied; the values rank the "
            "options but are not your chance of winning. {cost}"
        ).format(cost=_cost_words(costs["product"]))

    def _estimate_equal_turns(self, sit: Situation) -> Part:
        """Equal turns without the equilibrium: the race or the memoryless opponent (the rest
        of the round exact), whichever measured the smaller loss in seats like the mover's."""
        N = sit.players
        last = sit.seat == N - 1
        costs = {m: measured_cost(m, self.rs, N, seat_last=last) for m in ("memoryless", "race")}
        method = _least(costs, default="memoryless")
        seats = _("the last seat") if last else _("a seat before the last")
        if method == "race":
            return self._race(sit, cost=costs["race"], seats=seats)
        geo = self.solution("geometric")
        adv = self._give(objective_named("geometric").advisor(geo, sit.opponents, sit.seat), sit)
        head = _(
            "Estimate: the opponents taken as one who wins each of their turns with a fixed chance, the rest "
            "of the round exact. {cost}"
        ).format(cost=_cost_words(costs["memoryless"], seats))
        return Part(head, adv, False, "memoryless")

    def _race(self, sit: Situation, cost: Cost | None = None, seats: str | None = None, alone: bool = False) -> Part:
        from thousand.solvers.advice import race_advisor

        adv = self._give(race_advisor(self.solution("race")), sit)
        if alone:
            head = _("Alone: the fewest expected turns to reach the goal.")
            return Part(head, adv, True, "alone race")
        if cost is None and sit.opponents:
            cost = measured_cost("race", self.rs, sit.players)
        head = _(
            "Estimate: the fewest expected turns to reach the goal alone, the opponents left aside. {cost}"
        ).format(cost=_cost_words(cost, seats))
        return Part(head, adv, False, "race")

    def _rounded(self, sol, adv: Advice) -> Advice:
        from thousand.storage.solve import note_rounding

        return note_rounding(sol, adv, command=not self.on_request) if hasattr(sol, "rounding_note") else adv


def _least(costs: dict, default: str) -> str:
    """The method whose largest measured loss is the smallest (``default`` where none was measured)."""
    known = {m: c for m, c in costs.items() if c is not None}
    return min(known, key=lambda m: known[m].high) if known else default


def _cost_words(cost: Cost | None, seats: str | None = None) -> str:
    if cost is None:
        return _("Its cost has not been measured on games like this one.")
    return cost.words(seats)


def advice_text(parts: list[Part]) -> str:
    """Parts as text: each advice's first line says what to do and what it is worth, the
    method one line below it, then every option."""
    out = []
    for head, adv, _exact, _method in parts:
        if adv is None:
            out.append(head)
        else:
            out.append(adv.headline())
            out.append("  " + head)
            out.append(adv.render())
    return "\n".join(out)


def advice_json(parts: list[Part]) -> list[dict]:
    """Parts as JSON: the method, whether exact, and the advice's fields."""
    return [
        {"method": head, "method_id": mid, "exact": exact, **(adv.to_json() if adv is not None else {})}
        for head, adv, exact, mid in parts
    ]
