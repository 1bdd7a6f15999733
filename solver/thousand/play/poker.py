"""The poker-dice scorekeeper and the game in play: ``thousand play poker --players A B C``.

:class:`PokerGame` is one game driven by log entries, like :class:`thousand.play.Game`:
``roll F,F,...`` (the faces thrown: all five at the first throw, then the faces of the
dice picked up), ``reroll F,F,...`` (the dice picked up to throw again; only re-rollable
ones under the lock rule) and ``stop`` (keep the hand). A turn ends at a stop or after
the last throw; when every player of a round has played, the best hand wins, and players
tied at the top play a new round among themselves in their seat order (RULES.md §10).
The save format is the 1000 scorekeeper's (ruleset, overrides, players, seed, log).
"""

from __future__ import annotations

from collections import Counter

from thousand.base.errors import Refused, StateError
from thousand.base.i18n import N_, _, dice_count
from thousand.engine.poker import _minus
from thousand.rules.poker import DICE, PokerRuleset, parse_dice
from thousand.solvers.poker_advice import PokerTurnState, Situation

from .session import LoggedGame, handle_line


def _faces(d) -> str:
    return ",".join(map(str, d))


class PokerGame(LoggedGame):
    """A game of poker dice between ``names`` (at least two), driven by log entries."""

    def __init__(
        self,
        rs: PokerRuleset,
        names: list[str],
        spec: str = "",
        overrides: tuple[str, ...] = (),
        seed: int | None = None,
    ):
        from thousand.solvers.poker import MAX_PLAYERS

        super().__init__(rs, names, spec, overrides, seed)
        if len(names) > MAX_PLAYERS:
            raise StateError(
                _("poker dice is solved for up to {top} players, not {n}").format(top=MAX_PLAYERS, n=len(names))
            )
        self._reset()

    def _reset(self) -> None:
        self.rounds: list[list[int]] = [list(range(len(self.names)))]
        self.results: list[dict[int, tuple[int, ...]]] = [{}]
        self.pos = 0
        self.winners: list[int] | None = None
        self.messages: list[str] = []
        self._new_turn()

    def _new_turn(self) -> None:
        self.dice: tuple[int, ...] | None = None
        self.throw = 0
        self.free: tuple[int, ...] = ()
        self.picked: tuple[int, ...] | None = None

    # ------------------------------------------------------------ state

    @property
    def over(self) -> bool:
        return self.winners is not None

    @property
    def seats(self) -> list[int]:
        return self.rounds[-1]

    @property
    def current(self) -> int:
        return self.seats[self.pos]

    def situation(self) -> Situation:
        """The mover's situation in the current round (a replay is the same game, smaller)."""
        hands = self.rs.hands
        got = [hands.strength(d) for d in self.results[-1].values()]
        after = len(self.seats) - self.pos - 1
        if not got:
            return Situation(None, 0, after)
        best = max(got)
        return Situation(best, got.count(best), after)

    def turn_state(self) -> PokerTurnState | None:
        if self.dice is None:
            return None
        return PokerTurnState(self.dice, self.throw, self.free)

    # ------------------------------------------------------------ entries

    def normalise(self, entry: str) -> str:
        return normalise_entry(entry)

    def _apply(self, entry: str) -> list[str]:
        self.messages = []
        if self.over:
            raise Refused(_("the game is over (undo to change the last entry)"))
        verb, _sep, arg = entry.partition(" ")
        faces = tuple(int(f) for f in arg.split(",")) if arg else ()
        if verb == "roll":
            self._roll(faces)
        elif verb == "reroll":
            self._reroll(faces)
        else:
            self._stop()
        return self.messages

    def _roll(self, faces: tuple[int, ...]) -> None:
        name, rs = self.names[self.current], self.rs
        if self.dice is None:
            if len(faces) != DICE:
                raise Refused(_("the first throw is of all {all} dice, not {n}").format(all=DICE, n=len(faces)))
            self.dice, self.throw, self.free = tuple(sorted(faces)), 1, tuple(sorted(faces))
        else:
            if self.picked is None:
                raise Refused(_("say which dice you pick up first: reroll F,F (or stop)"))
            if len(faces) != len(self.picked):
                raise Refused(
                    _("{k} dice were picked up ({dice}), {n} faces given").format(
                        k=len(self.picked), dice=_faces(self.picked), n=len(faces)
                    )
                )
            kept = _minus(self.dice, self.picked)
            self.dice = tuple(sorted(kept + faces))
            self.throw += 1
            self.free = tuple(sorted(faces)) if rs.lock_kept else self.dice
            self.picked = None
        hand = rs.hands.describe(rs.hands.strength(self.dice))
        self.messages.append(
            _("{name} throws {faces}: {dice} — {hand}").format(
                name=name, faces=_faces(faces), dice=_faces(self.dice), hand=hand
            )
        )
        if self.throw >= rs.rolls:
            self._end_turn()

    def _reroll(self, faces: tuple[int, ...]) -> None:
        if self.dice is None:
            raise Refused(_("throw the five dice first"))
        if self.picked is not None:
            raise Refused(_("{dice} are picked up already: roll them").format(dice=_faces(self.picked)))
        if not faces:
            raise Refused(_("say which dice to pick up: reroll F,F (or stop)"))
        if Counter(faces) - Counter(self.dice):
            raise Refused(
                _("{faces} are not among the dice {dice}").format(faces=_faces(sorted(faces)), dice=_faces(self.dice))
            )
        if Counter(faces) - Counter(self.free):
            locked = _faces(_minus(self.dice, self.free))
            raise Refused(
                _(
                    "only the dice thrown at the last throw may be thrown again (the lock rule): {free}; {locked} stay"
                ).format(free=_faces(self.free), locked=locked)
            )
        self.picked = tuple(sorted(faces))

    def _stop(self) -> None:
        if self.dice is None:
            raise Refused(_("throw the five dice first"))
        if self.picked is not None:
            raise Refused(_("{dice} are picked up: roll them (or undo)").format(dice=_faces(self.picked)))
        self._end_turn()

    def _end_turn(self) -> None:
        hands = self.rs.hands
        seat = self.current
        self.results[-1][seat] = self.dice
        self.pos += 1
        self._new_turn()
        if self.pos < len(self.seats):
            return
        res = self.results[-1]
        top = max(hands.strength(d) for d in res.values())
        tied = [s for s in self.seats if hands.strength(res[s]) == top]
        if len(tied) == 1:
            self.winners = tied
            self.messages.append(
                _("GAME OVER: {text}").format(
                    text=_("{name} wins with {total}").format(name=self.names[tied[0]], total=hands.describe(top))
                )
            )
            return
        self.messages.append(
            _("{who} tie with {hand}: they play a new round among themselves").format(
                who=_(" and ").join(self.names[s] for s in tied), hand=hands.describe(top)
            )
        )
        self.rounds.append(tied)
        self.results.append({})
        self.pos = 0

    # ------------------------------------------------------------ display

    def prompt(self) -> str:
        if self.over:
            return _("game over> ")
        name = self.names[self.current]
        if self.dice is None:
            return _("{name}: roll {dice}> ").format(name=name, dice=dice_count(DICE))
        if self.picked is not None:
            return _("{name}: roll {dice}> ").format(name=name, dice=dice_count(len(self.picked)))
        return _("{name} [{dice}, throw {k}/{n}]> ").format(
            name=name, dice=_faces(self.dice), k=self.throw, n=self.rs.rolls
        )

    def where(self) -> str:
        if self.over:
            return _("the game is over")
        name = self.names[self.current]
        if self.dice is None:
            return _("{name} to play: throw all five dice").format(name=name)
        if self.picked is not None:
            return _("{name}: throw the {dice} picked up ({faces})").format(
                name=name, dice=dice_count(len(self.picked)), faces=_faces(self.picked)
            )
        lock = (
            _(" (re-rollable: {dice})").format(dice=_faces(self.free))
            if self.rs.lock_kept and self.free != self.dice
            else ""
        )
        return _("{name}: {dice} after throw {k} of {n} — reroll F,F or stop{lock}").format(
            name=name, dice=_faces(self.dice), k=self.throw, n=self.rs.rolls, lock=lock
        )

    def sheet(self) -> str:
        hands = self.rs.hands
        w = max(6, *(len(n) for n in self.names))
        k = len(self.rounds)
        lines = [f"{self.rs.name} — " + (_("round 1") if k == 1 else _("replay {k} (tied players)").format(k=k - 1))]
        res = self.results[-1]
        best = max((hands.strength(d) for d in res.values()), default=None)
        for s in self.seats:
            mark = "*" if self.winners and s in self.winners else (">" if not self.over and s == self.current else " ")
            if s in res:
                st = hands.strength(res[s])
                text = f"{_faces(res[s])}  {hands.describe(st)}" + (_("  (best)") if st == best else "")
            elif not self.over and s == self.current and self.dice is not None:
                text = f"{_faces(self.dice)}  " + _("(throw {k} of {n})").format(k=self.throw, n=self.rs.rolls)
            else:
                text = _("to play")
            lines.append(f"  {mark} {self.names[s]:<{w}}  {text}")
        out = [s for s in range(len(self.names)) if s not in self.seats]
        if out:
            lines.append("  " + _("out: {names}").format(names=", ".join(self.names[s] for s in out)))
        lines.append("  " + self.where())
        return "\n".join(lines)

    def roll_dice(self) -> tuple[int, ...]:
        """The program's throw, of all five or of the dice picked up (:meth:`LoggedGame.dice_rng`)."""
        rng = self.dice_rng()
        n = DICE if self.dice is None else len(self.picked or ())
        return tuple(sorted(rng.randint(1, 6) for _k in range(n)))


def normalise_entry(entry: str) -> str:
    """A log entry in its canonical form, or :class:`Refused`."""
    verb, _sep, arg = entry.strip().partition(" ")
    arg = arg.strip()
    if verb == "stop" and not arg:
        return "stop"
    if verb in ("roll", "reroll") and arg:
        try:
            faces = parse_dice(arg, None)
        except StateError as exc:
            raise Refused(str(exc)) from None
        if len(faces) > DICE:
            raise Refused(_("{0} dice: poker dice is played with {1}").format(len(faces), DICE))
        return f"{verb} {_faces(faces)}"
    raise Refused(_("not a log entry: {0!r}").format(entry))


class PokerAdvisor:
    """``?`` in the scorekeeper: the exact advice for the mover (the table is solved for the
    game's number of players on first use: seconds)."""

    def __init__(self, rs: PokerRuleset, tables_dir: str | None):
        self.rs, self.tables_dir, self._sol = rs, tables_dir, None

    def advise(self, g: PokerGame) -> str:
        from thousand.solvers.poker_advice import advise
        from thousand.storage.poker import poker_solution

        if g.over:
            raise Refused(_("the game is over"))
        st = g.turn_state()
        if st is None:
            raise Refused(_("throw the five dice first: advice is about what to re-roll"))
        if g.picked is not None:
            raise Refused(_("{dice} are picked up: roll them").format(dice=_faces(g.picked)))
        if self._sol is None:
            self._sol = poker_solution(
                self.rs, len(g.names), self.tables_dir, progress=lambda line: print(f"({line})", flush=True)
            )
        adv = advise(self.rs, self._sol, g.situation(), st)
        return _("advice (exact) for {name}").format(name=g.names[g.current]) + "\n" + adv.render()


HELP = N_("""commands (one per line):
  roll [F,F,...]     the faces thrown (roll 6,6,3,2,1 or just 66321): all five at the first
                     throw, then the dice picked up; 'roll' alone: the program throws
  reroll F,F,...     pick up these dice to throw again (e.g. reroll 3,2,1)
  stop               keep the hand (the turn ends; it also ends after the last throw)
  ? | hint           advice: stop or which dice to re-roll, with the chance to win of every option
  sheet              show the sheet
  undo               take back the last entry
  save FILE          save the game as JSON (resume: thousand play --resume FILE)
  log                the entries so far
  help               this text
  quit               leave (the game is saved as it goes)""")


def run_poker_command(g: PokerGame, line: str, advisor: PokerAdvisor) -> tuple[str, bool]:
    """Handle one input line of the poker scorekeeper; returns (text to show, whether to quit)."""
    return handle_line(g, line, advisor, HELP, _poker_entry)


def _poker_entry(g: PokerGame, verb: str, arg: str, line: str) -> str:
    """A poker scorekeeper verb (roll, reroll, stop, or faces) applied; the text to show."""
    if verb in ("r", "roll") and not arg:
        if g.over:
            raise Refused(_("the game is over (undo to change the last entry)"))
        if g.dice is not None and g.picked is None:
            raise Refused(_("say which dice you pick up first: reroll F,F (or stop)"))
        entry = "roll " + _faces(g.roll_dice())
    elif verb in ("r", "roll"):
        entry = "roll " + arg
    elif verb in ("reroll", "rr", "pick"):
        entry = "reroll " + arg if arg else "reroll"
    elif verb in ("s", "stop", "stand"):
        if arg:
            raise Refused(_("stop takes no argument"))
        entry = "stop"
    elif verb[0].isdigit():
        entry = "roll " + line
    else:
        raise Refused(_("unknown command {verb!r} (type help)").format(verb=verb))
    before = (len(g.rounds), g.pos)
    msgs = g.submit(entry)
    tail = g.sheet() if g.over or (len(g.rounds), g.pos) != before else "  " + g.where()
    return "\n".join([*msgs, tail])


__all__ = ["PokerGame", "PokerAdvisor", "run_poker_command"]
