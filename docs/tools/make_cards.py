"""Search and measure the strategy card of every preset (docs/card.md): writes
docs/cards/PRESET.md, PRESET.png and PRESET.json (the report, the search's time and memory).

    python docs/tools/make_cards.py [PRESET ...] [--cells N]
    python docs/tools/make_cards.py classic --measure-only --from classic-nobarrel
    python docs/tools/make_cards.py admission --reduce

Each preset's card is found by ``thousand.analysis.card.find_card`` (the loss measured
exactly against the duel table) and its figures are printed as it goes; a preset that
cannot be measured says why in its JSON. ``--measure-only`` (a duel too large to search on
this machine) measures exactly the turn's optimum as a card and the cards of the ``--from``
presets carried over, and keeps the best of them.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from thousand.analysis.card import (
    Card,
    CardDuel,
    CardReport,
    DuelOutOfReach,
    find_card,
    least_by_size,
    shape,
    turn_card,
    turn_only,
)
from thousand.analysis.chart import draw_card
from thousand.base.errors import ThousandError
from thousand.rules import load_ruleset
from thousand.rules.ruleset import preset_names

OUT = Path(__file__).resolve().parents[1] / "cards"
# every preset of the 1000 family (poker dice has no turn to stop: no card)
PRESETS = tuple(p for p in preset_names() if p != "poker")


def table(presets) -> str:
    """The cards measured so far (docs/cards/*.json) as the table of docs/card.md."""
    out = [
        "| preset | numbers on the card | win chance given up | first / second seat (optimum) | "
        "turn points (optimum) | found by | search |",
        "|---|---:|---:|---|---|---|---:|",
    ]
    for name in presets:
        path = OUT / f"{name}.json"
        if not path.exists():
            continue
        d = json.loads(path.read_text())
        if not d.get("measured"):
            out.append(f"| {name} | | not measured: {d['why']} | | | | |")
            continue
        how = "search" if d.get("searched", True) else "measured only"
        if d.get("loss") is None:  # no duel here: one turn's points alone
            out.append(
                f"| [{name}](cards/{name}.md) | {d['card']['cells']} | not measured: {d['unmeasured']} | | "
                f"{d['turn_points']:.2f} ({d['turn_optimum']:.2f}) | the turn's optimum | "
                f"{d['search_seconds']:.0f} s, {d['peak_mb']:,} MB |"
            )
            continue
        out.append(
            f"| [{name}](cards/{name}.md) | {d['card']['cells']} | {100 * d['loss']:.4f}% | "
            f"{100 * d['win_first']:.2f}% / {100 * d['win_second']:.2f}% ({100 * d['p_star']:.2f}% / "
            f"{100 * (1 - d['p_star']):.2f}%) | {d['turn_points']:.2f} ({d['turn_optimum']:.2f}) | {how} | "
            f"{d['search_seconds']:.0f} s, {d['peak_mb']:,} MB |"
        )
    return "\n".join(out)


def say(name: str, what: str, t0: float) -> None:
    print(f"{name}: {what} ({time.perf_counter() - t0:.0f} s)", flush=True)


def measure_only(rs, sources, t0: float):
    """The best of the turn's card and the ``sources``' cards, each measured exactly."""
    duel = CardDuel(rs)
    say(rs.name, f"duel set up in {duel.setup_seconds:.0f} s, {len(duel.opt_patterns[3]):,} optimum patterns", t0)
    cards = [("the turn's optimum", turn_card(rs))]
    for src in sources:
        d = json.loads((OUT / f"{src}.json").read_text())
        cards.append((f"the card of {src}", Card.from_json(rs, d["card"])))
    best = None
    for what, card in cards:
        rep = duel.measure(card)
        say(rs.name, f"{what}: loss {rep.loss:.4%} ({rep.sweeps} sweeps)", t0)
        if best is None or rep.loss < best.loss:
            best = rep
    return best.with_turn()


def reduce_stored(name: str) -> None:
    """The stored card of ``name`` counted at the size it really has: the reduced card is
    measured again (it must give up what the card gave up: it plays the same), its size
    joins the trail, and every size of the trail is the least loss at or below it."""
    from dataclasses import replace

    path = OUT / f"{name}.json"
    d = json.loads(path.read_text())
    rs = load_ruleset(name)
    rep = CardReport.from_json(rs, d)
    small = rep.card.reduced()
    if small == rep.card:
        print(f"{name}: the card repeats no row or column ({rep.card.cells} numbers)")
        return
    new = CardDuel(rs).measure(small).with_turn()
    if abs(new.loss - rep.loss) > 1e-9:
        raise SystemExit(f"{name}: the reduced card gives up {new.loss:.6%}, the card {rep.loss:.6%}")
    found = dict(rep.steps)
    found[small.cells] = min(found.get(small.cells, 1.0), new.loss)
    steps = least_by_size(found)
    d.update(replace(new, steps=steps).to_json())
    path.write_text(json.dumps(d, indent=1) + "\n")
    (OUT / f"{name}.md").write_text(new.card.markdown(replace(new, steps=steps)), encoding="utf-8")
    draw_card(new.card, replace(new, steps=steps), str(OUT / f"{name}.png"))
    print(f"{name}: {rep.card.cells} numbers are really {small.cells}, loss {new.loss:.4%} (was {rep.loss:.4%})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("presets", nargs="*", default=PRESETS)
    ap.add_argument("--cells", type=int, default=24)
    ap.add_argument("--measure-only", action="store_true", help="measure the turn's card and --from cards only")
    ap.add_argument("--from", dest="sources", nargs="*", default=(), help="presets whose cards to carry over")
    ap.add_argument(
        "--shapes",
        nargs="*",
        default=None,
        help="only these shapes, each COLUMNS,ROWS,ENDGAME[,score] (e.g. 6,1,1; 1,3,1,score: rows by your own score)",
    )
    ap.add_argument("--redraw", action="store_true", help="write the Markdown and PNG again from the JSON")
    ap.add_argument(
        "--reduce",
        action="store_true",
        help="count the stored card at the size it really has (Card.reduced): measured again, that size "
        "added to the search's trail, the files written again (for cards found before the search reduced them)",
    )
    ap.add_argument("--table", action="store_true", help="print the Markdown table of the measured cards and stop")
    args = ap.parse_args()
    if args.table:
        print(table(args.presets))
        return
    if args.reduce:
        for name in args.presets:
            reduce_stored(name)
        return
    if args.redraw:
        for name in args.presets:
            path = OUT / f"{name}.json"
            d = json.loads(path.read_text()) if path.exists() else {}
            if d.get("measured"):
                rep = CardReport.from_json(load_ruleset(name), d)
                (OUT / f"{name}.md").write_text(rep.card.markdown(rep), encoding="utf-8")
                draw_card(rep.card, rep, str(OUT / f"{name}.png"))
        return
    OUT.mkdir(exist_ok=True)
    for name in args.presets:
        t0 = time.perf_counter()
        rs = load_ruleset(name)
        try:
            if args.measure_only:
                rep = measure_only(rs, args.sources, t0)
            else:
                only = [shape(x.split(",")) for x in args.shapes] if args.shapes else None
                rep = find_card(rs, args.cells, progress=lambda s, t0=t0: say(name, s, t0), only=only)
        except DuelOutOfReach as exc:  # the turn's card, measured by one turn's points alone
            rep = turn_only(rs, str(exc))
            say(name, f"no duel here ({exc}): the turn's card", t0)
        except ThousandError as exc:
            (OUT / f"{name}.json").write_text(json.dumps({"measured": False, "why": str(exc)}, indent=1) + "\n")
            print(f"{name}: {exc}", flush=True)
            continue
        (OUT / f"{name}.md").write_text(rep.card.markdown(rep), encoding="utf-8")
        draw_card(rep.card, rep, str(OUT / f"{name}.png"))
        d = rep.to_json()
        d.update(
            measured=True,
            searched=not args.measure_only and rep.loss is not None,
            shapes=args.shapes or "all",
            search_seconds=round(time.perf_counter() - t0, 1),
            peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            cells_limit=args.cells,
        )
        (OUT / f"{name}.json").write_text(json.dumps(d, indent=1) + "\n")
        loss = "not measured" if rep.loss is None else f"{rep.loss:.4%}"
        print(f"{name}: loss {loss}, turn {rep.turn_points:.2f} of {rep.turn_optimum:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
