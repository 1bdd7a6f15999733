"""Charts a player can learn from: ``thousand chart RULES --objective duel|race --kind ...``.

Every number comes from the solver's turn values, never from simulation: for a
player state ``x`` the turn DP (:func:`thousand.kernel.turn_dp` with ``full=True``)
is fed the table's values of every way the turn can end -- exactly as the
advisor does -- and gives ``R(t, n)``, the value of rolling ``n`` dice at turn
total ``t``, next to ``stop[t]``, the value of banking. Stopping is optimal
where banking is allowed and ``stop[t] >= R(t, n)`` (ties stop, as in the DP).

Kinds:

* ``stop`` (race): per own score and dice left, the turn totals at which to stop;
  the *hold-at* total is the smallest of them.
* ``stop`` (duel): the hold-at total over own score x opponent score, per dice left.
* ``win`` (duel): the mover's win probability over both scores.
* ``rules``: the race hold-at totals of several rulesets on one plot (how pits,
  samosval and the barrel bend the boundary).

States: per score the plain one -- opened (at 0: the initial state), no bolts,
no attempts, no falls.
"""

from __future__ import annotations

import csv

import numpy as np

from thousand import kernel
from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.base.objectives import objective as objective_named
from thousand.engine.ends import TurnEnds
from thousand.engine.player import Moves, PlayerState
from thousand.rules.ruleset import Ruleset, load_ruleset
from thousand.solvers.advice import duel_end_values

__all__ = [
    "DEFAULT_COMPARE",
    "NEEDS_MPL",
    "chart_rows",
    "check_card_png",
    "decision_dice",
    "draw_card",
    "draw_duel_stop",
    "draw_race_stop",
    "draw_review",
    "draw_rules",
    "draw_win",
    "duel_stop_rows",
    "duel_turn",
    "make_chart",
    "plain_states",
    "race_stop_rows",
    "race_turn",
    "win_rows",
    "write_csv",
]

NEEDS_MPL = (
    "the charts (thousand chart, thousand review --chart, thousand card --png) need matplotlib: "
    "pip install matplotlib (in a clone of the repository: pip install '.[chart]')"
)
DEFAULT_COMPARE = ("classic-nobarrel", "plain")


# --------------------------------------------------------------------------- numbers


def plain_states(sol) -> list[PlayerState]:
    """Per score in the table, the state with no counters (at 0 the initial one), by score."""
    moves = Moves(sol.rs)
    out = {}
    x0 = moves.initial()
    for x in sol.index:
        if x.score == 0:
            if x == x0:
                out[0] = x
            continue
        if x == PlayerState(x.score):
            out[x.score] = x
    return [out[s] for s in sorted(out)]


def decision_dice(rs: Ruleset) -> list[int]:
    """Dice counts at which roll-or-stop is a decision (all dice only when hot dice are free)."""
    top = rs.dice if rs.hot_dice == "free" else rs.dice - 1
    return list(range(1, max(top, 1) + 1))


def _stop_matrix(ends: TurnEnds, stop_v: np.ndarray, tv) -> np.ndarray:
    """bool (T+1, N+1, K): stopping is optimal at total t with n dice (against column k)."""
    T = ends.T
    R = tv.R[: T + 1]  # (T+1, N+1, K)
    ok = ends.stop_ok.astype(bool)[:, None, None]
    return ok & (stop_v[: T + 1, None, :] >= R)


def race_turn(sol, x: PlayerState):
    """(ends, stop values, turn tables) of a race turn from ``x``."""
    from thousand.solvers.advice import race_advisor

    adv = race_advisor(sol)
    ends = TurnEnds.of(adv.moves, x)
    stop_v, forced_v, bust_v, win_v = adv.values_of(ends)
    tv = kernel.turn_dp(adv.table, ends.stop_ok, stop_v, ends.forced_ok, forced_v, bust_v, win_v, full=True)
    return ends, stop_v, tv


def duel_turn(sol, x: PlayerState, opponents: list[PlayerState]):
    """(ends, stop values (T+1, K), turn tables) of a duel turn of ``x`` against every opponent."""
    ends = TurnEnds.of(Moves(sol.rs), x)
    vals, bust = duel_end_values(sol, ends, opponents)
    tv = kernel.turn_dp(
        kernel.roll_table(sol.rs), ends.stop_ok, vals, ends.forced_ok, vals, bust, np.ones(len(opponents)), full=True
    )
    return ends, vals, tv


def _ranges(ts: list[int]) -> str:
    """'20-35 50-95' from sorted totals on the unit grid (unit steps)."""
    if not ts:
        return ""
    out, a, b = [], ts[0], ts[0]
    step = min((q - p for p, q in zip(ts, ts[1:])), default=1)
    for v in ts[1:]:
        if v == b + step:
            b = v
        else:
            out.append(f"{a}-{b}" if b > a else f"{a}")
            a = b = v
    out.append(f"{a}-{b}" if b > a else f"{a}")
    return " ".join(out)


def race_stop_rows(sol) -> list[dict]:
    """Per plain state and decision dice: the hold-at total and every total where stopping is best."""
    rs, u = sol.rs, sol.rs.unit
    rows = []
    for x in plain_states(sol):
        ends, stop_v, tv = race_turn(sol, x)
        S = _stop_matrix(ends, stop_v, tv)[:, :, 0]
        for n in decision_dice(rs):
            ts = [int(t) * u for t in np.nonzero(S[:, n])[0] if t > 0]
            last = ends.T * u
            rows.append(
                {
                    "ruleset": rs.name,
                    "score": x.score,
                    "dice": n,
                    "hold_at": ts[0] if ts else None,
                    "stop_totals": _ranges(ts) + ("+" if ts and ts[-1] == last else ""),
                }
            )
    return rows


def duel_stop_rows(sol) -> list[dict]:
    """Per own score, opponent score and decision dice: the hold-at total."""
    rs, u = sol.rs, sol.rs.unit
    ys = plain_states(sol)
    rows = []
    for x in ys:
        ends, stop_v, tv = duel_turn(sol, x, ys)
        S = _stop_matrix(ends, stop_v, tv)
        S[0] = False
        for n in decision_dice(rs):
            any_ = S[:, n, :].any(axis=0)
            first = S[:, n, :].argmax(axis=0)
            for k, y in enumerate(ys):
                rows.append(
                    {
                        "ruleset": rs.name,
                        "score": x.score,
                        "opp_score": y.score,
                        "dice": n,
                        "hold_at": int(first[k]) * u if any_[k] else None,
                    }
                )
    return rows


def win_rows(sol) -> list[dict]:
    ys = plain_states(sol)
    ii = np.array([sol.index[y] for y in ys])
    P = np.asarray(sol.table.values)[np.ix_(ii, ii)]
    return [
        {"ruleset": sol.rs.name, "score": x.score, "opp_score": y.score, "p_win": float(P[a, b])}
        for a, x in enumerate(ys)
        for b, y in enumerate(ys)
    ]


# --------------------------------------------------------------------------- pictures


def _mpl():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grid(rows, key: str, dice: int | None = None):
    """(own scores, opponent scores, matrix[opp, own]) of ``key`` from duel rows."""
    rr = [r for r in rows if dice is None or r["dice"] == dice]
    xs = sorted({r["score"] for r in rr})
    ys = sorted({r["opp_score"] for r in rr})
    xi = {s: i for i, s in enumerate(xs)}
    yi = {s: i for i, s in enumerate(ys)}
    M = np.full((len(ys), len(xs)), np.nan)
    for r in rr:
        v = r[key]
        M[yi[r["opp_score"]], xi[r["score"]]] = np.nan if v is None else v
    return np.array(xs), np.array(ys), M


def _panels(plt, k: int, w: float = 5.2, h: float = 4.2):
    cols = 1 if k == 1 else 2
    rws = (k + cols - 1) // cols
    fig, axs = plt.subplots(rws, cols, figsize=(w * cols, h * rws), squeeze=False)
    flat = list(axs.flat)
    for ax in flat[k:]:
        ax.set_visible(False)
    return fig, flat[:k]


def _dice_word(n: int) -> str:
    return f"{n} {'die' if n == 1 else 'dice'}"


def draw_race_stop(plt, rows, rs: Ruleset, title: str):
    dice = sorted({r["dice"] for r in rows})
    fig, axs = _panels(plt, len(dice))
    for ax, n in zip(axs, dice):
        rr = [r for r in rows if r["dice"] == n]
        xs = np.array([r["score"] for r in rr])
        hold = np.array([np.nan if r["hold_at"] is None else r["hold_at"] for r in rr], float)
        top = np.nanmax(hold) if np.isfinite(hold).any() else rs.goal
        ymax = min(rs.goal, max(top * 1.15, 10 * rs.unit))
        # the whole stop region: stop totals per score, drawn as vertical bars
        for r in rr:
            for part in r["stop_totals"].rstrip("+").split():
                a, _, b = part.partition("-")
                lo, hi = int(a), int(b or a)
                if r["stop_totals"].endswith("+") and part == r["stop_totals"].rstrip("+").split()[-1]:
                    hi = ymax
                ax.plot(
                    [r["score"], r["score"]],
                    [lo, min(hi, ymax)],
                    color="#9fd49f",
                    lw=2.2,
                    solid_capstyle="butt",
                    zorder=1,
                )
        ax.step(xs, hold, where="mid", color="#1a5e1a", lw=1.4, zorder=2, label="hold at (smallest stop total)")
        ax.set_ylim(0, ymax)
        ax.set_xlim(xs.min() - rs.unit, xs.max() + rs.unit)
        ax.set_xlabel("own banked score")
        ax.set_ylabel("turn total")
        ax.set_title(f"{_dice_word(n)} left to roll", fontsize=10)
        ax.grid(alpha=0.3)
    axs[0].legend(loc="lower left", fontsize=8, title="green: stop is best", title_fontsize=8, framealpha=0.9)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def draw_duel_stop(plt, rows, rs: Ruleset, title: str):
    dice = sorted({r["dice"] for r in rows})
    fig, axs = _panels(plt, len(dice), 5.4, 4.6)
    held = [r["hold_at"] for r in rows if r["hold_at"] is not None]
    # the colours resolve the common totals; the desperate ones (opponent about to win) saturate
    vmax = float(np.percentile(held, 95)) if held else float(rs.goal)
    for ax, n in zip(axs, dice):
        xs, ys, M = _grid(rows, "hold_at", n)
        from matplotlib.colors import BoundaryNorm

        step = next(
            (v for v in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500) if v >= vmax / 20 and v % rs.unit == 0),
            rs.unit * 10,
        )
        bounds = np.arange(0, vmax + step, step)
        cmap = plt.get_cmap("viridis")
        im = ax.pcolormesh(xs, ys, M, shading="nearest", cmap=cmap, norm=BoundaryNorm(bounds, cmap.N, extend="max"))
        ax.set_xlabel("own banked score")
        ax.set_ylabel("opponent's score")
        ax.set_title(f"hold at, {_dice_word(n)} left to roll", fontsize=10)
        fig.colorbar(im, ax=ax, label="turn total to stop at")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def _levels(vmax: float) -> list[float]:
    step = 10 if vmax <= 60 else (50 if vmax <= 400 else 100)
    return list(np.arange(step, vmax, step))


def draw_win(plt, rows, rs: Ruleset, title: str):
    fig, ax = plt.subplots(figsize=(6.2, 5.2))
    xs, ys, M = _grid(rows, "p_win")
    im = ax.pcolormesh(xs, ys, M, shading="nearest", cmap="RdBu", vmin=0, vmax=1)
    cs = ax.contour(xs, ys, M, levels=[0.1, 0.25, 0.5, 0.75, 0.9], colors="k", linewidths=0.7)
    ax.clabel(cs, fontsize=7, fmt="%.2f")
    ax.set_xlabel("own banked score (to move)")
    ax.set_ylabel("opponent's score")
    fig.colorbar(im, ax=ax, label="P(win) of the player to move")
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig


def draw_rules(plt, rows, rs: Ruleset, title: str):
    dice = sorted({r["dice"] for r in rows})
    fig, axs = _panels(plt, len(dice), 6.0, 3.8)
    names = list(dict.fromkeys(r["ruleset"] for r in rows))
    top = max((r["hold_at"] for r in rows if r["hold_at"] is not None), default=rs.goal)
    for ax, n in zip(axs, dice):
        for k, name in enumerate(names):
            rr = [r for r in rows if r["dice"] == n and r["ruleset"] == name]
            xs = [r["score"] for r in rr]
            hold = [np.nan if r["hold_at"] is None else r["hold_at"] for r in rr]
            ax.step(
                xs, hold, where="mid", lw=1.6 if k == 0 else 1.1, label=name, alpha=1.0 if k == 0 else 0.8, zorder=3 - k
            )
        for p in rs.pits:
            ax.axvspan(p.low, p.exit, color="#cccccc", alpha=0.35, lw=0)
        for d in rs.dump:
            ax.axvline(d, color="#aa3333", lw=0.6, ls=":")
        if rs.barrel.kind != "none" and rs.barrel.threshold:
            ax.axvline(rs.barrel.threshold, color="#333399", lw=0.6, ls="--")
        ax.set_ylim(0, min(rs.goal, top * 1.05))
        ax.set_xlabel("own banked score")
        ax.set_ylabel("hold at (turn total)")
        ax.set_title(f"{_dice_word(n)} left to roll", fontsize=10)
        ax.grid(alpha=0.3)
    axs[0].legend(fontsize=8, loc="upper right")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- command


def chart_rows(
    rs: Ruleset,
    objective: str,
    kind: str,
    tables_dir: str | None,
    compare: tuple[str, ...] = (),
    overrides: tuple[str, ...] = (),
) -> list[dict]:
    """The numbers behind a chart (see the module doc)."""
    from thousand.storage.solve import solve_objective

    against = objective_named(objective).opponents  # the duel's charts, else the race's
    if kind == "win" and not against:
        raise StateError(_("--kind win needs --objective duel"))
    for spec in (rs,) + tuple(load_ruleset(c, overrides) for c in compare):
        if against and spec.equal_turns:
            raise StateError(
                _(
                    "{0} plays equal turns: duel charts are not drawn for it (the mover's seat "
                    "would be a third axis); use --objective race"
                ).format(spec.name)
            )
    if kind == "rules":
        rows = []
        for spec in (rs,) + tuple(load_ruleset(c, overrides) for c in compare):
            sol = solve_objective(spec, objective, tables_dir, progress=True)
            if not against:
                rows += race_stop_rows(sol)
            else:  # the duel boundary against an opponent at 0
                y0 = Moves(spec).initial()
                rows += [dict(r, ruleset=spec.name) for r in duel_stop_rows(sol) if r["opp_score"] == y0.score]
        return rows
    sol = solve_objective(rs, objective, tables_dir, progress=True)
    if kind == "win":
        return win_rows(sol)
    return duel_stop_rows(sol) if against else race_stop_rows(sol)


def write_csv(rows: list[dict], path: str) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})


def make_chart(
    rs: Ruleset,
    rules: str,
    objective: str,
    kind: str,
    compare: tuple[str, ...],
    overrides: tuple[str, ...],
    tables_dir: str | None,
    out: str | None = None,
    data: str | None = None,
) -> list[dict]:
    """The rows behind a chart (written as CSV to ``data``) and the picture (PNG, ``out``)."""
    if kind == "rules" and not compare:
        compare = tuple(c for c in DEFAULT_COMPARE if c != rules)
    plt = None
    if out:
        if not str(out).lower().endswith(".png"):
            raise StateError(_("--out {0}: charts are PNG pictures, name the file .png").format(out))
        plt = _mpl()
        if plt is None:
            raise StateError(NEEDS_MPL)
    rows = chart_rows(rs, objective, kind, tables_dir, compare, overrides)
    if not rows:
        raise StateError(_("nothing to chart"))
    if data:
        try:
            write_csv(rows, data)
        except OSError as exc:
            raise StateError(_("cannot write {0}: {1}").format(data, exc.strerror or exc)) from None
    if out:
        title = {
            ("stop", "race"): f"{rs.name}: when to stop (race: fewest expected turns to win alone)",
            ("stop", "duel"): f"{rs.name}: when to stop in a duel (turn total to hold at)",
            ("win", "duel"): f"{rs.name}: P(win) of the player to move, optimal play by both",
            ("rules", "race"): "when to stop (race): " + " vs ".join(dict.fromkeys(r["ruleset"] for r in rows)),
            ("rules", "duel"): "when to stop (duel, opponent at 0): "
            + " vs ".join(dict.fromkeys(r["ruleset"] for r in rows)),
        }[(kind, objective)]
        draw = {
            "stop": draw_duel_stop if objective_named(objective).opponents else draw_race_stop,
            "win": draw_win,
            "rules": draw_rules,
        }[kind]
        _save(plt, draw(plt, rows, rs, title), out, 80)
    return rows


def _save(plt, fig, out: str, dpi: int) -> None:
    """Write ``fig`` as PNG to ``out`` (a one-line error where it cannot be written)."""
    try:
        fig.savefig(out, dpi=dpi)
    except OSError as exc:
        raise StateError(_("cannot write {0}: {1}").format(out, exc.strerror or exc)) from None
    finally:
        plt.close(fig)


def draw_review(points: list[dict], players: list[str], blunder: float, title: str, ylabel: str, out: str) -> None:
    """A game review's curve (``thousand review GAME --chart FILE.png``): each player's value
    after each decision (``points[k]["chances"]``: name -> value, at log entry ``entry``), the
    decisions that gave up at least ``blunder`` marked and numbered by their entry."""
    plt = _mpl()
    if plt is None:
        raise StateError(NEEDS_MPL)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for name in players:
        xs = [p["entry"] + 1 for p in points if name in p["chances"]]
        ys = [p["chances"][name] for p in points if name in p["chances"]]
        if xs:
            ax.plot(xs, ys, marker=".", markersize=3, linewidth=1.2, label=name)
    bad = [p for p in points if p["lost"] >= blunder]
    for p in bad:
        mover = players[p["player"]]
        y = p["chances"][mover]
        ax.plot([p["entry"] + 1], [y], "x", color="red", markersize=9, markeredgewidth=2)
        ax.annotate(
            f"{p['entry'] + 1}: -{p['lost']:.3g}",
            (p["entry"] + 1, y),
            textcoords="offset points",
            xytext=(4, 6),
            fontsize=7,
            color="red",
        )
    ax.set_xlabel("log entry")
    ax.set_ylabel(ylabel)
    ax.set_title(title + (f" — {len(bad)} blunder(s) marked" if bad else ""), fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(plt, fig, out, 90)


def check_card_png(out: str):
    """Refuse a card picture that cannot be drawn (no matplotlib, not a PNG) before a long
    search; returns pyplot."""
    plt = _mpl()
    if plt is None:
        raise StateError(NEEDS_MPL)
    if not out.lower().endswith(".png"):
        raise StateError(_("the card picture is a PNG file: {0}").format(out))
    return plt


def draw_card(card, report, out: str) -> None:
    """A strategy card as one printable page (``thousand card RULES --png FILE.png``): its
    rules, the table of marks, the measured cost, and how the loss fell with the card's
    size (``report.steps``)."""
    import textwrap

    plt = check_card_png(out)
    fig = plt.figure(figsize=(8.27, 11.69))  # A4, portrait
    fig.text(0.07, 0.95, _("Strategy card: {name}").format(name=card.rs.name), fontsize=20, weight="bold")
    y = 0.91
    for k, line in enumerate(card.rules_text(), start=1):
        for j, part in enumerate(textwrap.wrap(line, 78)):
            fig.text(0.07, y, (f"{k}. " if j == 0 else "    ") + part, fontsize=11)
            y -= 0.022
        y -= 0.006
    rows = [card.band_label(i) for i in range(len(card.marks))]
    cells = [[str(m) for m in r] for r in card.marks]
    if card.chooses:
        rows.append(_("worth of rolling them"))
        cells.append([f"+{w}" for w in (card.worth or (0,) * len(card.groups))])
    height = 0.04 * (len(rows) + 1)
    fig.text(0.07, y - 0.01, _("Marks by the dice you would roll next:"), fontsize=11)
    ax = fig.add_axes((0.44, y - 0.03 - height, 0.5, height))
    ax.axis("off")
    tab = ax.table(
        cellText=cells,
        rowLabels=rows,
        colLabels=[card.group_label(j) for j in range(len(card.groups))],
        loc="upper center",
        cellLoc="center",
        bbox=(0, 0, 1, 1),
    )
    tab.auto_set_font_size(False)
    tab.set_fontsize(12)
    y = y - 0.08 - height
    for line in report.lines():
        for part in textwrap.wrap(line, 90):
            fig.text(0.07, y, part, fontsize=10)
            y -= 0.02
    if report.steps:
        ax2 = fig.add_axes((0.12, 0.08, 0.8, min(0.3, y - 0.14)))
        cells = [c for c, _v in report.steps]
        ax2.plot(cells, [100 * v for _c, v in report.steps], marker="o")
        ax2.set_xlabel(_("numbers on the card"))
        ax2.set_ylabel(_("win chance given up (%)"))
        ax2.set_xticks(cells)
        ax2.grid(alpha=0.3)
    _save(plt, fig, out, 100)
