"""What the approximations for three players and more cost, measured exactly.

For each ruleset: the exact equilibrium (thousand.solvers.nplayer), then for each method of
thousand.solvers.approx two exact policy evaluations (thousand.solvers.profile.evaluate_profile, no
simulation): every seat playing the method, and one seat playing it among equilibrium
players (each seat in turn). The loss of a seat is its equilibrium chance minus its chance
with the approximation. The equilibrium itself is evaluated the same way as a check (its
mixed states are played by the tie rule there, so it may differ from the solved values by
the weight of those states; the losses are measured from that evaluation, so that the
other seats play the same in both). The longest cases (DUELS_ONLY) measure the duel
methods and the lookaheads alone, one seat at a time. Then GAMES games of equilibrium play put every decision
met to each method (thousand.analysis.alongside): how often it chooses differently, and
what such a decision costs.

    python bench/bench_approx.py [--only pig-50 ...] [--methods odds ahead ...] [--tables DIR] [--json F] [--write]
    python bench/bench_approx.py --from F --decisions-again --tables DIR [--json F2]
    python bench/bench_approx.py --growth [--chart docs/charts/approx-growth.svg]
    python bench/bench_approx.py --table

``--write`` stores the one-seat losses and the decisions of every method per case in
solver/thousand/solvers/approx_measured.json, which the advice quotes and chooses by (a
method not measured in this run keeps its earlier figures); ``--from FILE`` writes it from
the ``--json`` file of an earlier run. ``--tables`` keeps the solved tables, so a second
run reads them. ``--growth`` fits each method's worst loss against the goal (the fit the
advice quotes) and ``--table`` prints docs/results.md's tables, both from that file.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

try:
    import thousand  # noqa: F401
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from thousand.engine.player import Moves  # noqa: E402
from thousand.rules import load_ruleset  # noqa: E402
from thousand.solvers.approx import (
    METHODS,
    DuelDecider,
    FinishDecider,
    LookaheadDecider,
    MemorylessDecider,
    OddsDecider,
    ProductDecider,
    RaceDecider,
    duel_matrix,
    interacting,
    race_turns,
)
from thousand.solvers.profile import EquilibriumDecider, evaluate_profile  # noqa: E402
from thousand.storage.geometric import geometric_duel  # noqa: E402
from thousand.storage.solve import solve  # noqa: E402


def classic_board(goal: int, pit: tuple[int, int], barrel: int, dump: int, bolts: int = 3) -> tuple[str, ...]:
    """Classic's rules on a board of ``goal``: opening, overtaking and push-off as classic has
    them, one pit ``[low, exit)``, samosval at ``dump``, ``bolts`` bolts costing 100 (in pits
    too), and the points barrel at ``barrel`` with 3 attempts and one fall of 100."""
    return (
        f"goal={goal}",
        f"pits=[{{low={pit[0]},exit={pit[1]}}}]",
        f"barrel.threshold={barrel}",
        f"dump=[{dump}]",
        "barrel.max_falls=1",
        f"bolts.limit={bolts}",
        'bolts.exempt=["unopened"]',
    )


CASES = {  # name: (preset, overrides, players)
    "pig-50": ("pig", ("goal=50",), 3),
    "pig-75": ("pig", ("goal=75",), 3),
    "pig-100": ("pig", ("goal=100",), 3),
    "plain-250": ("plain", ("goal=250",), 3),
    "plain-500": ("plain", ("goal=500",), 3),
    "plain-750": ("plain", ("goal=750",), 3),
    "plain-1000": ("plain", (), 3),
    "farkle-1500": ("farkle", ("goal=1500",), 3),
    "farkle-3000": ("farkle", ("goal=3000",), 3),
    "pig-30-4": ("pig", ("goal=30",), 4),
    "pig-40-4": ("pig", ("goal=40",), 4),
    "plain-150-4": ("plain", ("goal=150",), 4),
    # 1000 games with every interaction (docs/results.md's small classic, and longer boards)
    "classic-100": ("classic", classic_board(100, (50, 60), 75, 65, bolts=2), 3),
    "classic-150": ("classic", classic_board(150, (50, 75), 100, 85, bolts=2), 3),
    "classic-200": ("classic", classic_board(200, (50, 100), 150, 135, bolts=2), 3),
    "classic-300": ("classic", classic_board(300, (100, 150), 250, 205), 3),
    # equal turns (six-dice's rule): the seat of the mover in the state, the round's last turns;
    # the duel-based methods do not see seats, so the race and the memoryless opponent are measured
    "pig-30-equal": ("pig", ("goal=30", "equal_turns=true"), 3),
    "pig-50-equal": ("pig", ("goal=50", "equal_turns=true"), 3),
}
# the longest cases measure the methods the advice chooses between, one seat at a time (the
# race and finishing times cost ten times as much everywhere measured, and finishing times
# need a turn DP per opponent tuple and round; their figures from earlier runs are kept)
DUELS_ONLY = {"plain-500", "plain-750", "plain-1000", "pig-100", "classic-200", "classic-300", "pig-40-4"}
GAMES = 400  # games of equilibrium play whose decisions are compared, per case


def _advisors(rs, duel, race) -> dict:
    """The per-decision form of each method (what the advice plays), for the comparison
    along equilibrium play."""
    from thousand.analysis.alongside import AdvisorValues
    from thousand.solvers.advice import duel_advisor, duels_advisor, race_advisor

    def strongest(me, opps):
        return duel_advisor(duel, min(opps, key=lambda y: duel.value(me, y)))

    return {
        "product": AdvisorValues(lambda me, opps: duels_advisor(duel, list(opps), "product")),
        "odds": AdvisorValues(lambda me, opps: duels_advisor(duel, list(opps), "odds")),
        "duel": AdvisorValues(strongest, key=lambda me, opps: (me, opps)),
        "race": AdvisorValues(lambda me, opps: race_advisor(race), key=lambda me, opps: ()),
    }


def measure(name: str, tables: str, games: int = GAMES, methods=None) -> dict:
    from thousand.analysis.seats import equilibrium_of
    from thousand.storage.players import solve_players

    preset, sets, N = CASES[name]
    rs = load_ruleset(preset, sets)
    t0 = time.perf_counter()
    table = solve_players(rs, N, tables)  # stored in ``tables``: a second run reads it
    sol = equilibrium_of(table)
    t_eq = float(table.meta.get("solve_seconds") or time.perf_counter() - t0)  # the solve's, where read
    sp = sol.space
    x0 = Moves(rs).normalise(Moves(rs).initial())
    s0 = sol.index([x0] * N)
    own = evaluate_profile(sp, N, [EquilibriumDecider(sol)]).reshape(-1, N)  # every seat's block (equal_turns)
    # the reference: the equilibrium's decisions played as the evaluation plays them (at a
    # mixed state, the tie rule's policy), so that a loss compares like with like
    eq = own[s0]
    race = solve(rs, "race", tables=tables)
    turns = race_turns(sp, race)
    duel = None
    if rs.equal_turns:
        geo = geometric_duel(rs, tables, progress=False)
    else:
        duel = solve(rs, "duel", tables=tables)
        P = duel_matrix(sp, duel)
    out = {
        "ruleset": name,
        "players": N,
        "states": int(sol.V.shape[0]),
        "equilibrium_seconds": round(t_eq, 1),
        "certificate": sol.certificate,
        "mixed": len(sol.mixed),
        "seats": [float(v) for v in sol.V[s0]],
        "seats_pure": [float(v) for v in eq],
        "equilibrium_evaluated_max_diff": float(np.max(np.abs(own - sol.V))),
        "methods": {},
    }
    print(
        f"{name}: {N} players, {out['states']:,} states, equilibrium {t_eq:.1f} s, certificate "
        f"{sol.certificate:.1e}, {len(sol.mixed)} mixed states; seats {', '.join(f'{v:.6f}' for v in sol.V[s0])}; "
        f"its decisions played pure (the tie rule at mixed states) {', '.join(f'{v:.6f}' for v in eq)}, "
        f"anywhere within {out['equilibrium_evaluated_max_diff']:.1e}",
        flush=True,
    )
    if rs.equal_turns:
        makers = {"race": lambda: RaceDecider(sp, turns), "memoryless": lambda: MemorylessDecider(sol.game, geo)}
    else:
        makers = {
            "product": lambda: ProductDecider(sp, P, N - 1),
            "odds": lambda: OddsDecider(sp, P, N - 1),
            "duel": lambda: DuelDecider(sp, P, N - 1),
        }
        if name not in DUELS_ONLY:
            makers.update(race=lambda: RaceDecider(sp, turns), finish=lambda: FinishDecider(sp, turns, N - 1))
        makers.update(
            ahead=lambda: LookaheadDecider(sol.game, P, N - 1), round=lambda: LookaheadDecider(sol.game, P, N)
        )
    for method, make in makers.items():
        if methods and method not in methods:
            continue
        t0 = time.perf_counter()
        dec = make()  # one at a time: the lookaheads hold values of every state
        m = out["methods"][dec.name] = {}
        if name not in DUELS_ONLY:  # every seat playing it (the long cases: the one-seat losses only)
            m["every_seat"] = [float(v) for v in evaluate_profile(sp, N, [dec])[0][s0]]
        loss = []
        for k in range(N):
            lineup = [EquilibriumDecider(sol)] * N
            lineup[k] = dec
            loss.append(float(eq[k] - evaluate_profile(sp, N, lineup)[0][s0][k]))
        m["one_seat_loss"] = loss
        m["seconds"] = round(time.perf_counter() - t0, 1)
        every = m.get("every_seat")
        print(
            f"  {dec.name:8} "
            + (f"every seat: {', '.join(f'{v:.6f}' for v in every)}; " if every else "")
            + f"one seat among equilibrium players loses {', '.join(f'{v:.6f}' for v in loss)} (seats 1..{N}); "
            f"{m['seconds']:.1f} s",
            flush=True,
        )
    if not rs.equal_turns and games:
        compare_decisions(out, rs, table, duel, race, games)
    return out


def compare_decisions(out: dict, rs, table, duel, race, games: int) -> None:
    """Each method's decisions beside the equilibrium's along ``games`` games of equilibrium
    play (thousand.analysis.alongside), into ``out["methods"][name]["decisions"]``."""
    from thousand.analysis.alongside import along_equilibrium

    t0 = time.perf_counter()
    advisors = {k: v for k, v in _advisors(rs, duel, race).items() if k in out["methods"]}
    found, ended = along_equilibrium(table, advisors, games, seed=1)
    for k, d in found.items():
        got = out["methods"][k]["decisions"] = {"games": games, **d.to_json()}
        lo, hi = got["share_ci95"]
        print(
            f"  {k:8} along equilibrium play ({games} games, {d.decisions:,} decisions): chooses differently "
            f"at {100 * d.share:.2f}% (95% {100 * lo:.2f}-{100 * hi:.2f}%), mean loss of such a decision "
            f"{d.mean_loss:.5f}, largest {d.largest:.5f}",
            flush=True,
        )
    print(f"  ({ended} of {games} games ended; {time.perf_counter() - t0:.0f} s)", flush=True)


def decisions_again(results: list[dict], tables: str, games: int) -> None:
    """The comparison along equilibrium play alone, for the cases of an earlier ``--json``
    run whose tables are in ``tables`` (read, not solved again)."""
    from thousand.storage.players import solve_players

    for out in results:
        preset, sets, N = CASES[out["ruleset"]]
        rs = load_ruleset(preset, sets)
        if rs.equal_turns:
            continue
        print(out["ruleset"], flush=True)
        table = solve_players(rs, N, tables)
        compare_decisions(out, rs, table, solve(rs, "duel", tables=tables), solve(rs, "race", tables=tables), games)


def write_measured(results: list[dict]) -> Path:
    """solver/thousand/solvers/approx_measured.json: per case, the dice and the one-seat losses of every method
    (the cases measured now replace their earlier figures; the others are kept)."""
    rules = {r["ruleset"]: load_ruleset(*CASES[r["ruleset"]][:2]) for r in results}
    cases = [
        {
            "ruleset": r["ruleset"],
            "preset": CASES[r["ruleset"]][0],
            "goal": rules[r["ruleset"]].goal,
            "players": r["players"],
            "dice": rules[r["ruleset"]].dice,
            "interactions": interacting(rules[r["ruleset"]]),
            "equal_turns": bool(rules[r["ruleset"]].equal_turns),
            "losses": {name: m["one_seat_loss"] for name, m in r["methods"].items()},
            "decisions": {name: m["decisions"] for name, m in r["methods"].items() if "decisions" in m},
        }
        for r in results
    ]
    path = Path(__file__).resolve().parents[1] / "solver" / "thousand" / "solvers" / "approx_measured.json"
    kept = json.loads(path.read_text()) if path.exists() else {}
    before = {c["ruleset"]: c for c in kept.get("cases", [])}
    for c in cases:
        # a method measured before and not in this run keeps its figures
        old = before.pop(c["ruleset"], {})
        c["losses"] = {**old.get("losses", {}), **c["losses"]}
        c["decisions"] = {**old.get("decisions", {}), **c["decisions"]}
    cases = list(before.values()) + cases
    kept.update({"source": "python bench/bench_approx.py --write", "cases": cases})
    path.write_text(json.dumps(kept, indent=1) + "\n")
    return path


KINDS = {  # the kinds of game whose loss is followed against the goal: (preset, players)
    "Pig, 3 players": ("pig", 3),
    "plain, 3 players": ("plain", 3),
    "Farkle, 3 players": ("farkle", 3),
    "classic's rules, 3 players": ("classic", 3),
    "Pig, 4 players": ("pig", 4),
}
FOLLOWED = ("odds", "product", "duel", "race", "ahead", "round")
LOOKAHEADS = ("ahead", "round")  # compared with what the duel table alone gives (their own table)


def growth_fits() -> tuple[dict, list[str]]:
    """Per kind of game and method, the worst measured one-seat loss against the goal, the
    power law fitted through it (thousand.advice.costs.growth, the one the advice quotes),
    its spread and the projection to the preset's own goal (1000; Farkle 10,000; Pig 100)
    with its 95% prediction interval (a chance lost is at most 1): the fits, and a line each."""
    from thousand.advice.costs import growth

    fits, lines = {}, []
    for kind, (preset, N) in KINDS.items():
        rs = load_ruleset(preset)
        for method in FOLLOWED:
            fit = growth(method, rs, N)
            if fit is None:
                continue
            fits[(kind, method)] = fit
            lo, mid, hi = (min(v, 1.0) for v in fit.at(rs.goal))
            pts = ", ".join(f"{g}: {v:.5f}" for g, v in zip(fit.goals, fit.losses))
            spread = "through both points" if fit.spread is None else f"spread x{np.exp(fit.spread):.2f}"
            lines.append(
                f"{kind:27} {method:8} worst loss {pts}; loss ~ goal^{fit.b:.2f} ({spread}); "
                f"at {rs.goal}: {mid:.4f} (95% {lo:.4f}-{hi:.4f})"
            )
    return fits, lines


def growth_report(chart: str | None) -> None:
    """:func:`growth_fits` printed; with ``chart``, the figure (log-log, the fits drawn on
    to the real goal)."""
    fits, lines = growth_fits()
    print("\n".join(lines), flush=True)
    if chart is None:
        return
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FLOOR = 1e-5  # the chart's bottom: the prediction intervals of three points reach far below
    kinds = [k for k in KINDS if any((k, m) in fits for m in FOLLOWED)]
    fig, axes = plt.subplots(1, len(kinds), figsize=(3.2 * len(kinds), 3.4), sharey=True, squeeze=False)
    colours = {
        "odds": "tab:green",
        "product": "tab:blue",
        "duel": "tab:orange",
        "race": "tab:red",
        "ahead": "tab:purple",
        "round": "tab:brown",
    }
    words = {
        "odds": "duels' odds",
        "product": "product of duels",
        "duel": "strongest duel",
        "race": "race",
        "ahead": "the others' turns ahead",
        "round": "the next round ahead",
    }
    for ax, kind in zip(axes[0], kinds):
        goal = load_ruleset(KINDS[kind][0]).goal
        for method in FOLLOWED:
            fit = fits.get((kind, method))
            if fit is None:
                continue
            c = colours[method]
            ax.plot(fit.goals, fit.losses, "o", color=c, label=words[method])
            xs = np.geomspace(min(fit.goals), max(goal, max(fit.goals)), 40)
            ax.plot(xs, [min(fit.at(x)[1], 1.0) for x in xs], "-", color=c, lw=1)
            lo, _mid, hi = fit.at(goal)
            ax.plot([goal, goal], [max(lo, FLOOR), min(hi, 1.0)], "-", color=c, lw=3, alpha=0.35)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(FLOOR, 1.0)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(sorted({goal, *(g for m in FOLLOWED if (kind, m) in fits for g in fits[(kind, m)].goals)}))
        ax.set_title(kind, fontsize=9)
        ax.set_xlabel("goal")
        ax.axvline(goal, color="grey", lw=0.5, ls=":")
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
    axes[0][0].set_ylabel("worst loss of one seat (win chance)")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(
        "One seat's worst loss among equilibrium players: measured (dots), fitted, followed to the real goal",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(chart)
    print(f"wrote {chart}")


WORDS = {
    "odds": "duels' odds",
    "product": "product of duels",
    "duel": "duel against the strongest",
    "race": "race",
    "finish": "finishing times",
    "memoryless": "memoryless opponent",
    "ahead": "the others' next turns, then the odds",
    "round": "the next round, then the odds",
}


def _game(c: dict) -> str:
    name = {"classic": "classic's rules", "pig": "Pig", "farkle": "Farkle"}.get(c["preset"], c["preset"])
    return f"{name} to {c['goal']:,}" + (", equal turns" if c.get("equal_turns") else "")


def markdown_table(equal_turns: bool = False) -> str:
    """docs/results.md's table of the measured cases (with ``equal_turns`` or without),
    from the measured file (the one the advice reads): per case and method, each seat's loss
    among equilibrium players and, along equilibrium play, how often it chooses differently
    and what such a decision costs."""
    from thousand.advice.costs import measured_cases

    order = {k: i for i, k in enumerate(CASES)}
    cases = sorted(
        (
            c
            for c in measured_cases()
            if c.get("players", 2) > 2 and c["ruleset"] in order and bool(c.get("equal_turns")) == equal_turns
        ),
        key=lambda c: (c["players"], bool(c.get("equal_turns")), c["preset"], c["goal"]),
    )
    lines = [
        "| game | players | method | one seat among equilibrium players: loss in each seat | worst | "
        "along equilibrium play: decisions chosen differently (95%) | mean loss of one | largest |",
        "|---|---:|---|---|---:|---|---:|---:|",
    ]
    for c in cases:
        first = True
        for m in sorted(c["losses"], key=lambda m: max(c["losses"][m])):
            loss = c["losses"][m]
            d = c.get("decisions", {}).get(m)
            along = (
                f"{100 * d['share']:.2f}% ({100 * d['share_ci95'][0]:.2f}-{100 * d['share_ci95'][1]:.2f}%) "
                f"of {d['decisions']:,} in {d['games']} games | {d['mean_loss']:.4f} | {d['largest_loss']:.4f}"
                if d
                else "| |"
            )
            lines.append(
                f"| {_game(c) if first else ''} | {c['players'] if first else ''} | {WORDS[m]} | "
                f"{', '.join(f'{v:.5f}' for v in loss)} | {max(loss):.5f} | {along} |"
            )
            first = False
    return "\n".join(lines)


def better_table() -> str:
    """docs/results.md's comparison: per case, the odds' worst loss beside the smallest
    worst loss of the other methods measured there, and their ratio."""
    from thousand.advice.costs import measured_cases

    order = {k: i for i, k in enumerate(CASES)}
    cases = sorted(
        (c for c in measured_cases() if c["ruleset"] in order and "odds" in c["losses"]),
        key=lambda c: (c["players"], c["preset"], c["goal"]),
    )
    lines = ["| game | players | duels' odds | best of the others | ratio |", "|---|---:|---:|---|---:|"]
    for c in cases:
        odds = max(c["losses"]["odds"])
        rest = {m: max(v) for m, v in c["losses"].items() if m != "odds" and m not in LOOKAHEADS}
        m = min(rest, key=rest.get)
        ratio = f"{rest[m] / odds:.1f}" if odds > 0 else "(both 0)"
        lines.append(f"| {_game(c)} | {c['players']} | {odds:.5f} | {rest[m]:.5f} ({WORDS[m]}) | {ratio} |")
    return "\n".join(lines)


def lookahead_table() -> str:
    """docs/results.md's comparison of the lookaheads: per case where they were measured,
    the worst loss of the best method read off the duel table there (the odds, the product
    or the strongest duel) beside each lookahead's, and the ratio."""
    from thousand.advice.costs import measured_cases

    order = {k: i for i, k in enumerate(CASES)}
    cases = sorted(
        (c for c in measured_cases() if c["ruleset"] in order and all(m in c["losses"] for m in LOOKAHEADS)),
        key=lambda c: (c["players"], c["preset"], c["goal"]),
    )
    lines = [
        "| game | players | best read off the duel table | the others' next turns | ratio | the next round | ratio |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for c in cases:
        played = {m: max(c["losses"][m]) for m in ("odds", "product", "duel") if m in c["losses"]}
        best = min(played, key=played.get)
        row = f"| {_game(c)} | {c['players']} | {played[best]:.5f} ({WORDS[best]}) |"
        for m in LOOKAHEADS:
            v = max(c["losses"][m])
            row += f" {v:.5f} | {played[best] / v:.1f} |" if v > 0 else f" {v:.5f} | |"
        lines.append(row)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="+", choices=list(CASES), default=list(CASES))
    ap.add_argument(
        "--write", action="store_true", help="store the losses in solver/thousand/solvers/approx_measured.json"
    )
    ap.add_argument(
        "--tables",
        default=None,
        help="keep the tables solved here (a second run reads them); default: a temporary folder",
    )
    ap.add_argument(
        "--methods", nargs="+", choices=list(METHODS), default=None, help="measure these methods alone (default: all)"
    )
    ap.add_argument("--games", type=int, default=GAMES, help="games of equilibrium play whose decisions are compared")
    ap.add_argument("--json", dest="json_out", default=None, help="also write every figure to this file")
    ap.add_argument(
        "--from",
        dest="json_in",
        default=None,
        help="take the figures from the --json file of an earlier run instead of measuring",
    )
    ap.add_argument(
        "--decisions-again",
        action="store_true",
        help="with --from and --tables: compare the decisions along equilibrium play again (the exact figures kept)",
    )
    ap.add_argument(
        "--growth",
        action="store_true",
        help="print how each method's worst loss grows with the goal (from the measured file) and stop",
    )
    ap.add_argument("--chart", default=None, help="with --growth: draw it into this file (SVG or PNG)")
    ap.add_argument(
        "--table", action="store_true", help="print docs/results.md's table from the measured file and stop"
    )
    a = ap.parse_args()
    if a.table:
        print(markdown_table())
        print()
        print(markdown_table(equal_turns=True))
        print()
        print(better_table())
        print()
        print(lookahead_table())
        return
    if a.growth:
        growth_report(a.chart)
        return
    if a.json_in:
        results = json.loads(Path(a.json_in).read_text())
        if a.decisions_again:
            decisions_again(results, a.tables, a.games)
            if a.json_out:
                Path(a.json_out).write_text(json.dumps(results, indent=1))
    else:
        results = []
        with tempfile.TemporaryDirectory() as tmp:
            tables = a.tables or tmp
            for n in a.only:
                results.append(measure(n, tables, a.games, a.methods))
                if a.json_out:  # after every case: a long run that stops keeps what it measured
                    Path(a.json_out).write_text(json.dumps(results, indent=1))
    if a.write:
        print(f"wrote {write_measured(results)}")


if __name__ == "__main__":
    main()
