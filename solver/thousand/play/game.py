"""The scorekeeper: ``thousand play RULES --players A B [C ...]``.

A real game at a table, kept on a score sheet. Every rule comes from the turn
engine, :class:`thousand.engine.TurnRules` (rolls, set-asides, hot dice, stops,
forced ends) and :func:`thousand.engine.finish_turn` (what a finished turn does to
every player), so the sheet follows exactly the rules the solvers use.

The game is its log: a list of entries ``roll F,F,...`` (the faces thrown, also
when the program rolled them), ``keep F,F,...`` (a set-aside, when the rules
leave a choice) and ``stop`` (bank the turn). The sheet is what replaying the
log gives; ``undo`` replays it without the last entry, and a saved game is the
ruleset (preset or file, and the ``--set`` overrides) plus the log.

Within a turn: roll -> set aside (automatic when the rules leave no choice) ->
roll the remaining dice or stop. Hot dice, compulsory rolls, confirming rolls,
instant wins, mid-turn dumps and overshoots, busts and the effects of a bank on
the other players (push-off, overtaking) are applied as the rules say.
"""

from __future__ import annotations

from pathlib import Path

from thousand.advice.policy import SMALL_DUEL, SMALL_DUEL_EQUAL_TURNS, Advisor, Part, advice_json, advice_text
from thousand.advice.situation import Situation
from thousand.base.errors import Refused, StateError, ThousandError
from thousand.base.i18n import N_, _, dice_count
from thousand.base.objectives import objective as objective_named
from thousand.base.untrusted import InputError, cut, load_json
from thousand.engine.player import PlayerState
from thousand.engine.turn import TurnEnd, TurnRules, TurnState, finish_turn, next_in_round, round_winners
from thousand.rules.ruleset import Ruleset, load_ruleset
from thousand.rules.scoring import parse_roll

from .session import SAVE_FORMAT, LoggedGame, handle_line

__all__ = [
    "HELP",
    "SMALL_DUEL",
    "SMALL_DUEL_EQUAL_TURNS",
    "Advisors",
    "Game",
    "Turn",
    "advice_json",
    "advice_text",
    "game_entry",
    "keep_label",
    "normalise_entry",
    "open_game",
    "overshoots_fell",
    "read_save",
    "run_command",
]


def _faces(dice) -> str:
    return ",".join(map(str, dice))


def keep_label(points: int, dice) -> str:
    """One set-aside in words: "keep 1,5 (+15)"."""
    return _("keep {dice} (+{points})").format(dice=_faces(dice), points=points)


def _keeps(options) -> str:
    """The set-asides a roll allows, in words: "keep 1,5 (+15); keep 1 (+10)"."""
    return "; ".join(keep_label(p, d) for p, d in options)


class Turn:
    """The turn in progress: its :class:`thousand.engine.TurnState` and what happened so
    far (``steps``, for the sheet)."""

    def __init__(self, engine: TurnRules, state: TurnState):
        self.engine, self.state, self.steps = engine, state, []

    @property
    def total(self) -> int:
        return self.state.total

    @property
    def dice(self) -> int:
        """Dice to roll next (or showing, when a roll waits for a set-aside)."""
        return self.state.dice

    @property
    def roll(self) -> tuple[int, ...] | None:
        """A roll waiting for a set-aside."""
        return self.state.roll

    @property
    def options(self) -> list[tuple[int, tuple[int, ...]]]:
        return self.engine.set_asides(self.state.roll) if self.state.roll else []

    @property
    def compulsory(self) -> bool:
        """Hot dice: the next roll is compulsory."""
        return self.state.roll is None and self.engine.compulsory(self.state)

    @property
    def confirming(self) -> bool:
        """Hot dice, confirm: the next roll (or the one showing) confirms the turn."""
        return self.engine.confirming(self.state)


class Game(LoggedGame):
    """A game of ``rs`` between ``names``, driven by log entries (see the module doc)."""

    def __init__(
        self, rs: Ruleset, names: list[str], spec: str = "", overrides: tuple[str, ...] = (), seed: int | None = None
    ):
        super().__init__(rs, names, spec, overrides, seed)
        self.engine = TurnRules(rs)  # the rules of a turn in play
        self.moves = self.engine.moves
        self._reset()

    # ------------------------------------------------------------ state

    def _reset(self) -> None:
        n = len(self.names)
        self.states: list[PlayerState] = [self.moves.initial()] * n
        self.current = 0
        self.round = 1
        self.turns = [0] * n
        self.history: list[list[str]] = [[] for _k in range(n)]
        self.finished: dict[int, int] = {}  # equal_turns: player -> final total
        self.winners: list[int] | None = None
        self.messages: list[str] = []
        self._new_turn()

    def _new_turn(self) -> None:
        self.turn = Turn(self.engine, self.engine.start(self.player))

    @property
    def over(self) -> bool:
        return self.winners is not None

    @property
    def player(self) -> PlayerState:
        return self.states[self.current]

    # ------------------------------------------------------------ entries

    def normalise(self, entry: str) -> str:
        return normalise_entry(entry, self.rs)

    def _apply(self, entry: str) -> list[str]:
        self.messages = []
        if self.over:
            raise Refused(_("the game is over (undo to change the last entry)"))
        verb, _sep, arg = entry.partition(" ")
        if verb == "roll":
            self._roll(tuple(int(f) for f in arg.split(",")))
        elif verb == "keep":
            self._keep_choice(tuple(int(f) for f in arg.split(",")) if arg else None)
        elif verb == "stop":
            self._stop()
        else:  # pragma: no cover - normalise_entry lets nothing else through
            raise Refused(_("unknown entry {entry!r}").format(entry=entry))
        return self.messages

    def _say(self, text: str) -> None:
        self.messages.append(text)

    # ------------------------------------------------------------ a turn

    def _roll(self, faces: tuple[int, ...]) -> None:
        tr, name = self.turn, self.names[self.current]
        if tr.roll is not None:
            raise Refused(
                _("set dice aside from {roll} first: {options}").format(
                    roll=_faces(tr.roll), options=_keeps(tr.options)
                )
            )
        if len(faces) != tr.dice:
            raise Refused(_("{name} rolls {dice}, not {n}").format(name=name, dice=dice_count(tr.dice), n=len(faces)))
        faces = tuple(sorted(faces))
        nxt = self.engine.after_roll(tr.state, faces)
        if isinstance(nxt, TurnEnd) and nxt.kind == "win":
            tr.steps.append(_("{roll} instant win").format(roll=_faces(faces)))
            self._say(_("{name} rolls {roll}: an instant win!").format(name=name, roll=_faces(faces)))
            self._finish_game([self.current], _("{name} wins at once ({roll})").format(name=name, roll=_faces(faces)))
            return
        if isinstance(nxt, TurnEnd):
            tr.steps.append(_("{roll} bust").format(roll=_faces(faces)))
            self._say(
                _("{name} rolls {roll}: nothing scores — bust, the turn total {t} is lost").format(
                    name=name, roll=_faces(faces), t=tr.total
                )
            )
            self._finish(nxt)
            return
        tr.state = nxt
        opts = tr.options
        if len(opts) == 1:
            self._keep(opts[0][1])
            return
        self._say(
            _("{name} rolls {roll}: set aside one of {options}").format(
                name=name, roll=_faces(faces), options=_keeps(opts)
            )
        )

    def _keep_choice(self, dice: tuple[int, ...] | None) -> None:
        tr = self.turn
        if tr.roll is None:
            raise Refused(_("there is no roll to set dice aside from (roll first)"))
        self._keep(tr.options[0][1] if dice is None else dice)

    def _keep(self, kept: tuple[int, ...]) -> None:
        tr, x, name = self.turn, self.player, self.names[self.current]
        roll = tr.roll
        nxt = self.engine.keep(tr.state, kept)  # refused (and nothing changed) if not legal
        kept = tuple(sorted(kept))
        t1 = nxt.total  # every end of a set-aside carries its total
        pts = t1 - tr.total
        tr.steps.append(
            f"{_faces(roll)} +{pts}"
            if len(kept) == len(roll)
            else _("{roll} keep {kept} +{points}").format(roll=_faces(roll), kept=_faces(kept), points=pts)
        )
        self._say(
            _("{name} rolls {roll}: sets aside {kept} for {points}; turn total {t}").format(
                name=name, roll=_faces(roll), kept=_faces(kept), points=pts, t=t1
            )
        )
        if isinstance(nxt, TurnEnd):
            if nxt.event == "dump":
                self._say(
                    _("{s} + {t} = {sum}: samosval — the turn ends and the score becomes 0").format(
                        s=x.score, t=t1, sum=x.score + t1
                    )
                )
            elif nxt.event == "overshoot":
                self._say(
                    _("{s} + {t} = {sum} is over {goal}: overshoot — the turn ends").format(
                        s=x.score, t=t1, sum=x.score + t1, goal=self.rs.goal
                    )
                )
            else:
                self._say(_("the confirming roll scored: the turn is banked at once"))
            self._finish(nxt)
            return
        tr.state = nxt
        if len(kept) == len(roll):  # every die set aside: hot dice
            hot = self.rs.hot_dice
            if not (hot == "free" and nxt.dice == 1):
                self._say(
                    {
                        "must_roll": _("hot dice: all {n} dice again, and rolling them is compulsory"),
                        "confirm": _("hot dice: roll all {n} dice to confirm the turn"),
                        "free": _("hot dice: all {n} dice again; roll or stop"),
                    }[hot].format(n=nxt.dice)
                )

    def _stop(self) -> None:
        tr = self.turn
        end = self.engine.stop(tr.state)  # Refused, with the reason, where stopping is not allowed
        tr.steps.append(_("stop"))
        self._finish(end)

    # ------------------------------------------------------------ ends of turns

    def _finish(self, end: TurnEnd) -> None:
        """The turn ended: :func:`thousand.engine.finish_turn` applies it to every player;
        the sheet and the messages say what it did."""
        i, x, rs = self.current, self.player, self.rs
        name = self.names[i]
        res = finish_turn(self.moves, self.states, i, end, finished=tuple(self.finished))
        y = res.players[i]
        if end.kind == "bust" or end.event == "overshoot":
            what = _(end.event or "bust")
            self.history[i].append(
                what + (f" → {y.score}" if y.score != x.score else "") + self._changes(x, y, banked=False)
            )
            self._say(
                _("{name}: zero turn ({what})").format(name=name, what=what)
                + self._changes(x, y, banked=False)
                + (_("; score {a} → {b}").format(a=x.score, b=y.score) if y.score != x.score else "")
            )
            self.states[i] = y
            self._end_turn()
            return
        t = end.total
        for j, what in res.affected:
            o, o2 = self.states[j], res.players[j]
            words = [
                _("pushed off the barrel") if w == "pushed off" else _("overtaken (−{n})").format(n=rs.overtake)
                for w in what
            ]
            note = _("{what} by {name}: {a} → {b}").format(
                what=_(" and ").join(words), name=name, a=o.score, b=o2.score
            )
            self.history[j].append(note)
            self._say(_("{name} is {note}").format(name=self.names[j], note=note))
            self.states[j] = o2
        if res.won:
            if rs.equal_turns:
                self.finished[i] = res.final_total
                self.history[i].append(
                    _("+{t} → {total} (reached {goal})").format(t=t, total=res.final_total, goal=rs.goal)
                )
                self._say(
                    _("{name} banks {t}: {total}, over the goal; the round is completed").format(
                        name=name, t=t, total=res.final_total
                    )
                )
                self._end_turn()
                return
            # the sheet shows the winning total (the state's score is the one before the bank)
            self.states[i] = self.states[i]._replace(score=res.final_total)
            self.history[i].append(_("+{t} → {total} WIN").format(t=t, total=res.final_total))
            self._say(_("{name} banks {t}: {total}").format(name=name, t=t, total=res.final_total))
            self._finish_game([i], _("{name} wins with {total}").format(name=name, total=res.final_total))
            return
        line = f"+{t} → {y.score}"
        if rs.barrel.kind == "points" and x.score + t > y.score and y.score == rs.barrel.threshold:
            line += _(" (barrel cap)")
        elif y.score == 0 and x.score + t in rs.dump:
            line += _(" (samosval)")
        if self.moves.climbed(x, y):
            line += _(", on the barrel")
        self.history[i].append(line)
        self._say(
            _("{name} banks {t}: {a} → {b}").format(name=name, t=t, a=x.score, b=y.score)
            + self._changes(x, y, banked=True)
        )
        self.states[i] = y
        self._end_turn()

    def _changes(self, x: PlayerState, y: PlayerState, banked: bool) -> str:
        """What a turn did to the mover's counters, in words."""
        rs, out = self.rs, []
        if rs.bolts.limit and not banked:
            if y.bolts > x.bolts:
                out.append(_("bolt {n}/{limit}").format(n=y.bolts, limit=rs.bolts.limit))
            elif self.moves.exempt(x) is False and y.bolts == 0 and x.bolts == rs.bolts.limit - 1:
                out.append(
                    _("bolt {n}/{limit}: −{penalty}").format(
                        n=rs.bolts.limit, limit=rs.bolts.limit, penalty=rs.bolts.penalty
                    )
                )
        if y.overshoots > x.overshoots:
            out.append(_("overshoot {n}/{limit}").format(n=y.overshoots, limit=rs.barrel.overshoots))
        if y.barrel_tries > x.barrel_tries:
            out.append(_("barrel attempt {n}/{limit} failed").format(n=y.barrel_tries, limit=rs.barrel.attempts))
        if y.pit_tries > x.pit_tries:
            out.append(_("pit attempt {n}/{limit} failed").format(n=y.pit_tries, limit=rs.pit_attempts))
        if rs.on_barrel(x.score) and not rs.on_barrel(y.score) and not banked:
            out.append(_("falls off the barrel"))
        elif rs.barrel.kind == "exact" and overshoots_fell(x, y):
            out.append(_("falls"))
        if y.falls != x.falls and rs.barrel.max_falls:
            out.append(
                _("falls {n}/{limit}").format(n=y.falls, limit=rs.barrel.max_falls)
                if y.falls
                else _("the last fall: score 0")
            )
        if not rs.pit_of(x.score) and rs.pit_of(y.score):
            p = rs.pit_of(y.score)
            out.append(_("in the pit from {low} to {exit}").format(low=p.low, exit=p.exit))
        return (" (" + ", ".join(out) + ")") if out else ""

    def _end_turn(self) -> None:
        n = len(self.names)
        self.turns[self.current] += 1
        nxt = next_in_round(n, self.current, self.finished)
        if nxt is None:
            win = round_winners(self.finished)
            top = self.finished[win[0]]
            who = _(" and ").join(self.names[j] for j in win)
            self._finish_game(
                win,
                (_("{who} win with {total} (shared)") if len(win) > 1 else _("{name} wins with {total}")).format(
                    who=who, name=who, total=top
                ),
            )
            return
        if nxt <= self.current:
            self.round += 1  # a new round only if the game goes on
        self.current = nxt
        self._new_turn()

    def _finish_game(self, winners: list[int], text: str) -> None:
        self.winners = winners
        self._say(_("GAME OVER: {text}").format(text=text))

    # ------------------------------------------------------------ display

    def status(self, j: int) -> str:
        """A player's status on the sheet: unopened, pit, barrel, bolts, falls, overshoots."""
        rs, x, out = self.rs, self.states[j], []
        if j in self.finished:
            return _("finished with {total}").format(total=self.finished[j])
        if not x.opened:
            out.append(_("unopened (needs {n})").format(n=rs.open_min))
        pit = rs.pit_of(x.score)
        if pit:
            out.append(
                _("in the pit from {low} to {exit}").format(low=pit.low, exit=pit.exit)
                + (_(" tries {n}/{limit}").format(n=x.pit_tries, limit=rs.pit_attempts) if rs.pit_attempts else "")
            )
        if rs.on_barrel(x.score):
            out.append(
                _("on the barrel")
                + (
                    _(" tries {n}/{limit}").format(n=x.barrel_tries, limit=rs.barrel.attempts)
                    if rs.barrel.kind == "points" and rs.barrel.attempts
                    else ""
                )
            )
        if rs.bolts.limit and x.bolts:
            out.append(_("bolts {n}/{limit}").format(n=x.bolts, limit=rs.bolts.limit))
        if rs.barrel.max_falls and x.falls:
            out.append(_("falls {n}/{limit}").format(n=x.falls, limit=rs.barrel.max_falls))
        if rs.barrel.kind == "exact" and x.overshoots:
            out.append(_("overshoots {n}/{limit}").format(n=x.overshoots, limit=rs.barrel.overshoots))
        return ", ".join(out) or "-"

    def prompt(self) -> str:
        if self.over:
            return _("game over> ")
        tr = self.turn
        name = self.names[self.current]
        if tr.roll is not None:
            return _("{name}: keep? ").format(name=name)
        d = dice_count(tr.dice)
        if tr.total == 0:
            return _("{name}: roll {dice}> ").format(name=name, dice=d)
        return f"{name} [{tr.total}, {d}]> "

    def where(self) -> str:
        """One line: whose move it is and what they may do."""
        if self.over:
            return _("the game is over")
        tr, name = self.turn, self.names[self.current]
        d = dice_count(tr.dice)
        if tr.roll is not None:
            return _("{name}: choose the dice to set aside from {roll}").format(name=name, roll=_faces(tr.roll))
        if tr.total == 0:
            return _("{name} to play: roll {dice}").format(name=name, dice=d)
        if tr.compulsory:
            return _("{name}: turn total {t}, roll {dice} (compulsory)").format(name=name, t=tr.total, dice=d)
        why = self.engine.stop_refusal(tr.state)
        return (
            _("{name}: turn total {t}, {dice} to roll — roll or stop").format(name=name, t=tr.total, dice=d)
            if why is None
            else _("{name}: turn total {t}, {dice} to roll — roll (cannot stop: {why})").format(
                name=name, t=tr.total, dice=d, why=why
            )
        )

    def sheet(self) -> str:
        rs = self.rs
        w = max(6, *(len(n) for n in self.names))
        head = _("{name} — goal {goal}, round {round}").format(name=rs.name, goal=rs.goal, round=self.round)
        cols = _("player"), _("score"), _("status")
        lines = [head, f"    {cols[0]:<{w}}  {cols[1]:>6}  {cols[2]}", ""]
        lines.pop()
        for j, name in enumerate(self.names):
            mark = ">" if (j == self.current and not self.over) else " "
            if self.winners and j in self.winners:
                mark = "*"
            score = self.finished.get(j, self.states[j].score)
            lines.append(f"  {mark} {name:<{w}}  {score:>6}  {self.status(j)}")
            if self.history[j]:
                lines.append(
                    f"    {'':<{w}}          " + _("last: {steps}").format(steps="; ".join(self.history[j][-4:]))
                )
        lines.append("  " + self.where())
        return "\n".join(lines)

    # ------------------------------------------------------------ save

    @classmethod
    def from_json(cls, data: dict) -> Game:
        try:
            if "format" not in data:
                raise StateError(
                    _('not a saved game: no "format" field (thousand play and the web page save "format": {0})').format(
                        SAVE_FORMAT
                    )
                )
            if data.get("format") != SAVE_FORMAT:
                raise StateError(_("unsupported save format {0!r}").format(cut(data.get("format"))))
            for key in ("rules", "overrides", "players", "log"):
                v = data[key]
                if not (
                    isinstance(v, str) if key == "rules" else isinstance(v, list) and all(isinstance(e, str) for e in v)
                ):
                    raise StateError(_("not a saved game: bad field {0!r}").format(key))
            if data.get("seed") is not None and (type(data["seed"]) is not int):
                raise StateError(_("not a saved game: bad field 'seed'"))
            rs = _saved_ruleset(data)
            if rs.hash != data["ruleset_hash"]:
                raise StateError(
                    _("the rules {0!r} have changed since the game was saved (hash {1}, saved {2})").format(
                        data["rules"], rs.hash, data["ruleset_hash"]
                    )
                )
            from thousand.rules.poker import PokerRuleset

            if isinstance(rs, PokerRuleset):  # the same save format for poker dice
                from .poker import PokerGame
                from .poker import normalise_entry as poker_entry

                g = PokerGame(rs, list(data["players"]), data["rules"], tuple(data["overrides"]), data.get("seed"))
                log = [poker_entry(e) for e in data["log"]]
            else:
                g = cls(rs, list(data["players"]), data["rules"], tuple(data["overrides"]), data.get("seed"))
                log = [normalise_entry(e, rs) for e in data["log"]]
        except (KeyError, TypeError, AttributeError) as exc:
            raise StateError(_("not a saved game: missing or bad field {0}").format(exc)) from None
        try:
            g._replay(log)
        except ThousandError as exc:
            raise StateError(_("the saved log does not replay: {0}").format(exc)) from None
        return g

    def roll_dice(self) -> tuple[int, ...]:
        """Faces for the program's roll (:meth:`LoggedGame.dice_rng`)."""
        rng = self.dice_rng()
        return tuple(sorted(rng.randint(1, self.rs.faces) for _k in range(self.turn.dice)))


def overshoots_fell(x: PlayerState, y: PlayerState) -> bool:
    return x.overshoots > 0 and y.overshoots == 0 and y.score < x.score


def normalise_entry(entry: str, rs: Ruleset) -> str:
    """A log entry in its canonical form, or :class:`Refused`."""
    verb, _sep, arg = entry.strip().partition(" ")
    arg = arg.strip()
    if verb == "stop" and not arg:
        return "stop"
    if verb in ("roll", "keep"):
        if verb == "keep" and not arg:
            return "keep"
        try:
            faces = parse_roll(arg, rs)
        except StateError as exc:
            raise Refused(str(exc)) from None
        return f"{verb} {_faces(sorted(faces))}"
    raise Refused(_("not a log entry: {0!r}").format(entry))


# --------------------------------------------------------------------------- advice


class Advisors(Advisor):
    """The advice layer's :class:`thousand.advice.Advisor` asked about a game in play: the
    player to move, every other player in the order they move next, the round's last turns."""

    def situation(self, g: Game) -> Situation:
        """The decision of the player to move in ``g``, as the advice layer reads it."""
        if g.over:
            raise Refused(_("the game is over"))
        tr, rs = g.turn, self.rs
        roll = tr.roll
        dice = None if roll is not None else tr.dice
        n = len(g.names)
        order = [(g.current + k) % n for k in range(1, n)]
        common = {"turn_total": tr.total, "dice": dice, "roll": roll}
        if rs.equal_turns and g.finished and self.mode != "race":
            # the completed round's last turns: against the top final total, the seats after this one still to play
            F = max(g.finished.values())
            tied = sum(1 for v in g.finished.values() if v == F)
            later = list(range(g.current + 1, n))
            return Situation(
                rs,
                g.player,
                tuple(g.states[j] for j in later),
                to_beat=F,
                tied=tied,
                names=(g.names[g.current], *[g.names[j] for j in later]),
                **common,
            )
        others = [j for j in order if j not in g.finished]
        return Situation(
            rs,
            g.player,
            tuple(g.states[j] for j in others),
            seat=g.current if rs.equal_turns else None,
            names=(g.names[g.current], *[g.names[j] for j in others]),
            **common,
        )

    def advice(self, g: Game, objective: str | None = None) -> list[Part]:
        """The advice for the player to move (:meth:`thousand.advice.Advisor.advise`; an
        ``objective`` of a player alone, ``turn`` say, values the options by it instead)."""
        return super().advise(self.situation(g), objective)

    def advise(self, g: Game) -> str:  # type: ignore[override]
        """:meth:`advice` as text."""
        return advice_text(self.advice(g))

    def missing(self, g: Game) -> list[dict]:
        """The tables whose exact advice the position to move lacks, that a build on this
        machine would give: per table its ``objective`` (``duel`` or ``players<N>``) and the
        estimated ``seconds`` (low, high) of its solve. Empty where the advice is exact
        already, where no table applies (the race mode, a completed round's last turns) or
        none fits; where the N-player solver refuses the game, the duel table that its
        approximation reads."""
        from thousand.solvers.nplayer import NPlayerError

        rs = self.rs
        if g.over or self.mode == "race" or (rs.equal_turns and g.finished):
            return []
        others = [j for j in range(len(g.names)) if j != g.current and j not in g.finished]
        wanted = []
        if len(others) > 1:
            kind = objective_named("players").kind(len(others) + 1)
            if not self.players_available(len(others) + 1)[0]:
                try:
                    self.estimate(kind)
                    wanted.append((kind, True))
                except NPlayerError:  # refused: the approximation's duel table, where it reads one
                    if not rs.equal_turns:
                        wanted.append(("duel", False))
        elif not (rs.equal_turns and len(g.names) != 2):
            wanted.append(("duel", False))
        out = []
        for kind, per_players in wanted:
            if not per_players and self.duel_available()[0]:
                continue
            est = self.estimate(kind)
            if not est.get("exceeded"):
                out.append({"objective": kind, "seconds": [float(x) for x in est["seconds"]]})
        return out


# --------------------------------------------------------------------------- the command

HELP = N_("""commands (one per line):
  roll [F,F,...]   roll: type the faces thrown (e.g. roll 1,5,3,3,4 or just 15334),
                   or 'roll' alone and the program throws the dice
  keep [F,F,...]   set these dice aside (when the rules leave a choice; alone: the most points)
  stop             stop and bank the turn total (also: bank)
  ? | hint         advice for the player to move, with the value of every option
  sheet            show the score sheet
  undo             take back the last entry (roll, keep or stop)
  save FILE        save the game as JSON (resume: thousand play RULES --resume FILE)
  log              the entries so far
  help             this text
  quit             leave (the game is autosaved; the path is shown when you leave)""")


def run_command(g: Game, line: str, advisors: Advisors) -> tuple[str, bool]:
    """Handle one input line; returns (text to show, whether to quit)."""
    return handle_line(g, line, advisors, HELP, _game_entry)


def game_entry(g: Game, verb: str, arg: str, line: str) -> str:
    """The log entry of a 1000 scorekeeper verb (roll, keep, stop, or faces typed alone);
    ``roll`` alone throws the dice here (:meth:`LoggedGame.dice_rng`)."""
    if verb in ("r", "roll") and not arg:
        if g.over:
            raise Refused(_("the game is over (undo to change the last entry)"))
        if g.turn.roll is not None:
            g.submit("roll " + _faces(g.turn.roll))  # refused with the reason
        return "roll " + _faces(g.roll_dice())
    if verb in ("r", "roll"):
        return "roll " + arg
    if verb in ("k", "keep"):
        return ("keep " + arg) if arg else "keep"
    if verb in ("s", "stop", "bank", "hold"):
        if arg:
            raise Refused(_("stop takes no argument"))
        return "stop"
    if verb[:1].isdigit():
        return "roll " + line
    # the page has no help to type: the entries themselves say what is possible
    raise Refused(_("unknown command {verb!r}: an entry is roll, keep or stop").format(verb=cut(verb, 30)))


def _game_entry(g: Game, verb: str, arg: str, line: str) -> str:
    """A 1000 scorekeeper verb applied (:func:`game_entry`); the text to show."""
    entry = game_entry(g, verb, arg, line)
    turn_before = (g.current, g.turns[g.current])
    msgs = g.submit(entry)
    text = "\n".join(msgs)
    if g.over or (g.current, g.turns[g.current]) != turn_before:
        text += "\n" + g.sheet()
    else:
        text += "\n  " + g.where()
    return text


def _saved_ruleset(data: dict):
    """The rules of a save: the ruleset stored in it in full (saves since 2026-12-07), so that
    a game of a ruleset file opens where that file is not; else the rules it names."""
    from thousand.rules.ruleset import ruleset_from_mapping

    if isinstance(data.get("ruleset"), dict):
        try:
            return ruleset_from_mapping(data["ruleset"])
        except ThousandError as exc:
            raise StateError(_("not a saved game: its ruleset does not load ({0})").format(exc)) from None
    return load_ruleset(data["rules"], tuple(data["overrides"]))


def read_save(path: str | Path) -> dict:
    """The JSON object of a save file (one-line :class:`StateError` if unreadable or no object)."""
    try:
        data = load_json(Path(path).read_bytes(), _("the file"))
    except OSError as exc:
        raise StateError(
            _("cannot read the saved game {path}: {why}").format(path=cut(path), why=exc.strerror or exc)
        ) from None
    except InputError as exc:
        raise StateError(_("cannot read the saved game {path}: {why}").format(path=cut(path), why=exc)) from None
    if not isinstance(data, dict):
        raise StateError(_("{path} is not a saved game").format(path=cut(path)))
    return data


def open_game(
    rules: str | None, overrides: tuple[str, ...], names: list[str], seed: int | None, resume: str | None
) -> tuple[Game, str]:
    """A new game, or the one saved in ``resume`` (its ruleset comes with it; ``rules``,
    if given, must be the same); and a line saying which."""
    if not resume:
        if not rules:
            raise StateError(_("say which rules: thousand play RULES --players A B [C ...] (or --resume FILE)"))
        rs = load_ruleset(rules, overrides)
        from thousand.rules.poker import PokerRuleset

        if isinstance(rs, PokerRuleset):
            from .poker import PokerGame

            return PokerGame(rs, names, rules, overrides, seed), ""
        return Game(rs, names, rules, overrides, seed), ""
    data = read_save(resume)
    g = Game.from_json(data)
    if rules and g.rs.hash != load_ruleset(rules, overrides).hash:
        saved = " ".join([str(data.get("rules"))] + [f"--set {o}" for o in data.get("overrides", [])])
        raise StateError(_("{0} was saved with other rules ({1}), not {2!r}").format(resume, saved, rules))
    if names and names != g.names:
        raise StateError(_("{0} is a game of {1}, not of {2}").format(resume, ", ".join(g.names), ", ".join(names)))
    if seed is not None:
        g.seed = seed
    return g, _("resumed {path}: {n} entries").format(path=resume, n=len(g.log))
