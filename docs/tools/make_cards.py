"""Search and measure the strategy card of every preset (docs/card.md): writes
docs/cards/PRESET.md, PRESET.png and PRESET.json (the report, the search's time and memory).

    python docs/tools/make_cards.py [PRESET ...] [--cells N]

Each preset's card is found by ``thousand.analysis.card.find_card`` (the loss measured
exactly against the duel table) and its figures are printed as it goes; a preset that
cannot be measured says why in the summary.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from thousand.analysis.card import find_card
from thousand.analysis.chart import draw_card
from thousand.base.errors import ThousandError
from thousand.rules import load_ruleset

OUT = Path(__file__).resolve().parents[1] / "cards"
PRESETS = (
    "pig",
    "plain",
    "farkle",
    "farkle-cardgames",
    "zilch",
    "admission",
    "classic-nobarrel",
    "kubiki",
    "street",
    "classic",
    "classic-open",
    "six-dice",
)


def say(name: str, what: str, t0: float) -> None:
    print(f"{name}: {what} ({time.perf_counter() - t0:.0f} s)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("presets", nargs="*", default=PRESETS)
    ap.add_argument("--cells", type=int, default=24)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    for name in args.presets:
        t0 = time.perf_counter()
        rs = load_ruleset(name)
        try:
            rep = find_card(rs, args.cells, progress=lambda s, t0=t0: say(name, s, t0))
        except ThousandError as exc:
            (OUT / f"{name}.json").write_text(json.dumps({"measured": False, "why": str(exc)}, indent=1) + "\n")
            print(f"{name}: {exc}", flush=True)
            continue
        (OUT / f"{name}.md").write_text(rep.card.markdown(rep), encoding="utf-8")
        draw_card(rep.card, rep, str(OUT / f"{name}.png"))
        d = rep.to_json()
        d.update(
            measured=True,
            search_seconds=round(time.perf_counter() - t0, 1),
            peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            cells_limit=args.cells,
        )
        (OUT / f"{name}.json").write_text(json.dumps(d, indent=1) + "\n")
        print(f"{name}: loss {rep.loss:.4%}, turn {rep.turn_points:.2f} of {rep.turn_optimum:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
