"""Game review: ``thousand review GAME`` -- every decision of a saved game, valued.

A saved game (the scorekeeper's and the web page's save format, docs/review.md) is its
rules and its log of entries. The review replays the log through the scorekeeper's
:class:`~thousand.play.game.Game` and, before each entry that is a decision, values every
option the rules allowed there:

* a set-aside (``keep``) when a roll left more than one; its value is the option's, the
  best continuation after it included (that continuation is the next decision);
* rolling on or stopping (``roll ...`` / ``stop``), where stopping was allowed and the
  roll not compulsory.

The value is the win probability of the player to move -- exact from the duel table with
two players, from the N-player equilibrium where it exists, otherwise the best measured
approximation, named with its measured loss (:class:`~thousand.play.game.Advisors`) -- or,
with ``objective="turn"``, the expected points of the turn. What a decision gave up is
``value(best) - value(chosen)``, in the values' own terms; a decision is accurate when it
gave up at most :data:`ACCURATE` (0.1 percentage point of a win, 0.01 expected turns of
the race where a game of three or more falls back on it, or 1 expected point). Each
player's total counts the decisions valued in the review's main terms (its ``value``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from thousand.base.choices import REVIEW_OBJECTIVES
from thousand.base.errors import StateError, ThousandError
from thousand.base.i18n import _
from thousand.base.objectives import REGISTRY
from thousand.rules.poker import PokerRuleset

from .game import Advisors, Game, normalise_entry, read_save
from .session import SAVE_FORMAT

__all__ = [
    "ACCURATE",
    "BLUNDER",
    "WIN_TERMS",
    "Decision",
    "PlayerReview",
    "Review",
    "curve",
    "draw",
    "load_game",
    "render",
    "review_game",
]

WIN_TERMS = ("win_probability", "estimated_win_probability", "duel_product")
# a decision is accurate when it gives up at most this much, per kind of value
ACCURATE = {**dict.fromkeys(WIN_TERMS, 0.001), "expected_turns": 0.01, "expected_points": 1.0}
# a blunder, marked on the chart: at least this much
BLUNDER = {**dict.fromkeys(WIN_TERMS, 0.02), "expected_turns": 0.2, "expected_points": 20.0}


@dataclass
class Decision:
    """One decision of the game and its cost."""

    entry: int  # its place in the log (0 = the first entry)
    player: int
    round: int
    kind: str  # "keep" or "roll or stop"
    situation: str  # the position, as the advice states it
    chosen: str  # the option taken, as the advice labels it
    best: str
    chosen_value: float
    best_value: float
    lost: float  # best_value - chosen_value, >= 0 (up to rounding)
    method: str  # how the values were found (exact, or which approximation and its cost)
    exact: bool
    value: str = "win_probability"  # what the values are (the advice's value name)

    @property
    def accurate(self) -> bool:
        return self.lost <= ACCURATE[self.value]

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class PlayerReview:
    name: str
    decisions: int
    accurate: int
    lost: float  # the sum over the player's decisions
    worst: list[Decision] = field(default_factory=list)  # up to three, the worst first

    @property
    def accuracy(self) -> float | None:
        return self.accurate / self.decisions if self.decisions else None

    @property
    def mistakes(self) -> int:
        return self.decisions - self.accurate

    @property
    def lost_per_decision(self) -> float:
        return self.lost / self.decisions if self.decisions else 0.0

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "decisions": self.decisions,
            "accurate": self.accurate,
            "accuracy": self.accuracy,
            "mistakes": self.mistakes,
            "lost": self.lost,  # the sum of the decisions' losses
            "lost_per_decision": self.lost_per_decision,
            "worst": [d.to_json() for d in self.worst],
        }


@dataclass
class Review:
    rules: str
    ruleset: str
    players: list[str]
    objective: str
    value_name: str  # the advice's name of the values ("win_probability", "expected_points", ...)
    finished: bool
    winners: list[str]
    decisions: list[Decision]
    summary: list[PlayerReview]
    methods: list[str]  # every method the values came from, in order of first use

    @property
    def all_exact(self) -> bool:
        return all(d.exact for d in self.decisions)

    def to_json(self) -> dict:
        return {
            "rules": self.rules,
            "ruleset": self.ruleset,
            "players": self.players,
            "objective": self.objective,
            "value": self.value_name,
            "finished": self.finished,
            "winners": self.winners,
            "exact": self.all_exact,
            "methods": self.methods,
            "accurate_within": ACCURATE[self.value_name],
            "decisions": [d.to_json() for d in self.decisions],
            "summary": [p.to_json() for p in self.summary],
        }


def load_game(path: str | Path) -> Game:
    """The saved game in ``path`` (the format of docs/review.md), replayed; a file that is
    not one is a one-line :class:`StateError`."""
    data = read_save(path)
    if data.get("format") != SAVE_FORMAT:
        raise StateError(_("{path} is not a saved game").format(path=path))
    return Game.from_json(data)


def _chosen(adv, kind: str, entry: str, kept: tuple[int, ...] | None):
    """The option of ``adv`` that ``entry`` took (a keep: the best option keeping those dice)."""
    if kind == "keep":
        hits = [o for o in adv.options if o.action == "keep" and tuple(sorted(o.dice)) == kept]
    else:
        want = "stop" if entry == "stop" else "roll"
        hits = [o for o in adv.options if o.action == want]
    if not hits:
        return None
    key = (lambda o: o.value) if adv.higher_is_better else (lambda o: -o.value)
    return max(hits, key=key)


def review_game(
    g: Game,
    objective: str = "win",
    tables_dir: str | None = None,
    mode: str = "auto",
    solver=None,
    advisors: Advisors | None = None,
) -> Review:
    """Every decision of ``g`` (a replayed game; see the module docstring), valued.

    ``objective`` is ``"win"`` (the win probability, by ``mode``: ``auto`` takes the exact
    duel or equilibrium where it can, as the scorekeeper's advice does) or ``"turn"``
    (expected points of the turn). ``solver`` is the :class:`Advisors` solver (default:
    tables found or solved now); ``advisors`` an :class:`Advisors` of ``g``'s rules to use
    instead (the web page's, which solve in the background)."""
    if isinstance(g.rs, PokerRuleset):
        raise StateError(_("the review is for games of the 1000 family, not poker dice"))
    if objective not in REVIEW_OBJECTIVES:
        raise StateError(_("unknown review objective {0!r}: win or turn").format(objective))
    rs = g.rs
    log = list(g.log)
    replay = Game(rs, list(g.names), g.spec, g.overrides, g.seed)
    advisors = advisors or Advisors(rs, mode, tables_dir, solver=solver)
    # "turn" is the registry's objective of a player alone (the points of the turn); "win" the
    # game's chance, which the advice layer finds its own way
    alone = objective if objective in REGISTRY else None
    decisions: list[Decision] = []
    methods: list[str] = []
    value_name = REGISTRY[alone].value_name if alone else "win_probability"
    for k, raw in enumerate(log):
        entry = normalise_entry(raw, rs)
        tr = replay.turn
        verb, _sep, arg = entry.partition(" ")
        kind = None
        kept = None
        if not replay.over and tr.roll is not None and verb == "keep" and len(tr.options) > 1:
            kind = "keep"
            kept = tuple(sorted(int(f) for f in arg.split(","))) if arg else tuple(sorted(tr.options[0][1]))
        elif not replay.over and tr.roll is None and verb in ("roll", "stop") and replay.engine.can_stop(tr.state):
            kind = "roll or stop"
        if kind is not None:
            method, adv, exact = next(
                ((p.heading, p.advice, p.exact) for p in advisors.advice(replay, alone) if p.advice is not None),
                (None, None, False),
            )
            if adv is None:
                raise StateError(_("no advice for entry {n} ({entry}) of this game").format(n=k + 1, entry=raw))
            chosen = _chosen(adv, kind, entry, kept)
            if chosen is None:  # pragma: no cover - the scorekeeper refuses what the rules never offer
                raise StateError(_("entry {n} ({entry}) is no option of the advice").format(n=k + 1, entry=raw))
            best = adv.best
            lost = (best.value - chosen.value) if adv.higher_is_better else (chosen.value - best.value)
            if method not in methods:
                methods.append(method)
            decisions.append(
                Decision(
                    k,
                    replay.current,
                    replay.round,
                    kind,
                    f"{adv.state}; "
                    + _("turn total {t}").format(t=tr.total)
                    + (_(", roll {roll}").format(roll=",".join(map(str, tr.roll))) if tr.roll else ""),
                    chosen.label(),
                    best.label(),
                    float(chosen.value),
                    float(best.value),
                    max(0.0, float(lost)),
                    method,
                    bool(exact),
                    adv.value_name,
                )
            )
        try:
            replay.submit(entry)
        except ThousandError as exc:
            raise StateError(_("the saved log does not replay at entry {n}: {why}").format(n=k + 1, why=exc)) from None
    if decisions:  # the main terms: those of most decisions (a fallback may value a few otherwise)
        kinds = [d.value for d in decisions]
        value_name = max(dict.fromkeys(kinds), key=kinds.count)
    summary = []
    for j, name in enumerate(replay.names):
        mine = [d for d in decisions if d.player == j]
        main = [d for d in mine if d.value == value_name]
        worst = sorted(main, key=lambda d: (-d.lost, d.entry))[:3]
        summary.append(
            PlayerReview(name, len(mine), sum(1 for d in mine if d.accurate), sum(d.lost for d in main), worst)
        )
    return Review(
        g.spec,
        rs.name,
        list(replay.names),
        objective,
        value_name,
        replay.over,
        [replay.names[j] for j in (replay.winners or [])],
        decisions,
        summary,
        methods,
    )


def _fmt(value: str, v: float) -> str:
    """A value given up, as a person reads it: percentage points of a win, turns, points."""
    if value in WIN_TERMS:
        return f"{100 * v:.2f} pp"
    if value == "expected_turns":
        return _("{0:.3f} turns").format(v)
    return _("{0:.1f} points").format(v)


def _summary_line(value: str, p) -> str:
    """A player's line: accuracy and mistakes per 100 decisions (as backgammon players count
    them), then the average given up per decision; the game's total is named as what it is,
    a sum of the decisions' losses (for a chance of winning, not itself a chance)."""
    n = p.decisions
    fields = {
        "name": p.name,
        "n": n,
        "acc": "-" if p.accuracy is None else f"{100 * p.accuracy:.0f}%",
        "limit": _fmt(value, ACCURATE[value]),
        "m": p.mistakes,
        "per100": f"{100 * p.mistakes / n:.0f}" if n else "0",
        "mean": _fmt(value, p.lost_per_decision),
        "lost": _fmt(value, p.lost),
    }
    if value in WIN_TERMS:
        return _(
            "{name}: {n} decisions, accuracy {acc} (within {limit}), {m} mistakes ({per100} per 100 decisions); "
            "on average {mean} of winning chance given up per decision ({lost} summed over the game: a sum of "
            "the decisions' losses, not a chance)"
        ).format(**fields)
    return _(
        "{name}: {n} decisions, accuracy {acc} (within {limit}), {m} mistakes ({per100} per 100 decisions); "
        "on average {mean} given up per decision ({lost} summed over the game)"
    ).format(**fields)


def render(review: Review) -> str:
    """The review as text: every decision, then each player's accuracy, loss and worst."""
    lines = [
        _("review of a game of {rules} ({ruleset}): {players}").format(
            rules=review.rules, ruleset=review.ruleset, players=", ".join(review.players)
        ),
        (
            _("finished: {who} won").format(who=", ".join(review.winners))
            if review.finished
            else _("not finished: the review covers the entries so far")
        ),
        _("values: {how}").format(how="; ".join(review.methods) or _("(no decisions)")),
        "",
    ]
    for d in review.decisions:
        mark = "" if d.accurate else ("??" if d.lost >= BLUNDER[d.value] else "?")
        lines.append(
            f"{d.entry + 1:4}  {review.players[d.player]}, " + _("round {r}").format(r=d.round) + f": {d.situation}"
        )
        lines.append("      " + _("done: {chosen}").format(chosen=d.chosen) + f"  [{d.chosen_value:.6f}]")
        if not d.accurate:
            lines.append(
                "      "
                + _("best: {best}").format(best=d.best)
                + f"  [{d.best_value:.6f}]  "
                + _("gave up {lost}").format(lost=_fmt(d.value, d.lost))
                + f" {mark}"
            )
    lines.append("")
    for p in review.summary:
        lines.append(_summary_line(review.value_name, p))
        for d in p.worst:
            if not d.accurate:
                lines.append(
                    "  "
                    + _("entry {n}: {chosen} instead of {best}, {lost}").format(
                        n=d.entry + 1, chosen=d.chosen, best=d.best, lost=_fmt(d.value, d.lost)
                    )
                )
    return "\n".join(lines)


def curve(review: Review) -> list[dict]:
    """The chart's points: at each decision, every player's chance after it as far as the
    values tell it -- with two players the mover's chance and one minus it for the other;
    with more, the mover's own chance alone (the others' are not in the advice)."""
    out = []
    two = len(review.players) == 2
    for d in review.decisions:
        row = {"entry": d.entry, "player": d.player, "lost": d.lost, "chances": {}}
        row["chances"][review.players[d.player]] = d.chosen_value
        if two and d.value in WIN_TERMS:
            row["chances"][review.players[1 - d.player]] = 1.0 - d.chosen_value
        out.append(row)
    return out


def draw(review: Review, out: str) -> None:
    """The win-probability curve (or expected points) over the game, blunders marked, as PNG."""
    from thousand.analysis.chart import draw_review

    if not str(out).lower().endswith(".png"):
        raise StateError(_("--chart {0}: the chart is a PNG picture, name the file .png").format(out))
    draw_review(
        curve(review),
        review.players,
        BLUNDER[review.value_name],
        f"{review.ruleset}: " + ", ".join(review.players),
        {"expected_turns": "expected turns to win alone", "expected_points": "expected points of the turn"}.get(
            review.value_name, "P(win) after each decision"
        ),
        out,
    )
