"""A card's exact measurement (docs/card.md): the card's duel held as patterns against the
baseline of one sparse row per pair, both in the same run.

For each preset, the card of docs/cards/PRESET.json is measured by
:class:`thousand.analysis.card.CardDuel` (the rows as patterns, swept by the kernel's
``pattern_sweep``). The baseline is the layout the card's duel had before: every row
spelled out as a sparse row (``thousand.kernel._pure.PatternSweep.rows``, the pure twin's
own expansion, so the two hold the same entries) and swept by the kernel's
``level_sweep`` from the same start to the same tolerance, with plain sweeps as before
(the patterns' sweeps are Anderson-mixed). Printed per preset: pairs, the rows of the
optimum's turns per mover (its distinct patterns; a row per opponent before), the entries
each layout holds and their MB (the arrays counted: pattern or CSR entries and the per-row
arrays), seconds per sweep, sweeps, seconds, and each layout's loss (they must agree).
The process's peak resident memory is printed last; it includes the baseline's rows.

    python bench/bench_card.py [PRESET ...]      # default: classic-nobarrel kubiki classic
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

from thousand import kernel
from thousand.analysis.card import Card, CardDuel
from thousand.rules import load_ruleset

CARDS = Path(__file__).resolve().parents[1] / "docs" / "cards"


def mb(*arrays) -> float:
    return sum(a.nbytes for a in arrays) / 2**20


def spelled_out(duel: CardDuel, stores, levels):
    """The baseline: each level's rows as ``level_sweep`` takes them, ``(rows, rho, indptr,
    cols, vals, succ, a)`` (values negated: it solves ``x = rho - O x``)."""
    twin = kernel.backend("pure").pattern_sweep(duel.plans, stores, levels, 2 * duel.n**2)
    out = []
    for L, (rows, _pat, _, succ) in enumerate(levels):
        indptr, cols, vals, a, c = twin.rows(L)
        out.append((rows, c, indptr, cols.astype(np.int32), -vals, succ, a))
    return out


COLUMNS = ("preset", "pairs", "layout", "optimum's rows per mover", "entries", "MB held", "s per sweep", "sweeps")


def row(name, pairs, layout, per_mover, entries, held, per, sweeps, loss) -> None:
    cells = [name, f"{pairs:,}", layout, f"{per_mover:,.1f}", f"{entries:,}", f"{held:,.0f}", f"{per:.3f}", sweeps]
    cells += [f"{per * sweeps:.1f}", f"{loss:.12%}"]
    print("| " + " | ".join(map(str, cells)) + " |", flush=True)


def sweep_to(sweeper, x: np.ndarray, tol: float) -> tuple[int, float]:
    t0, sweeps, change = time.perf_counter(), 0, np.inf
    while change > tol:
        sweeps += 1
        change = sweeper.sweep(x, 0)
    return sweeps, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("presets", nargs="*", default=["classic-nobarrel", "kubiki", "classic"])
    ap.add_argument("--tol", type=float, default=1e-14)
    args = ap.parse_args()
    print(f"kernel: {kernel.IMPLEMENTATION}")
    print("| " + " | ".join((*COLUMNS, "seconds", "loss")) + " |")
    print("|---|---:|---|" + "---:|" * 6 + "---|")
    for name in args.presets:
        rs = load_ruleset(name)
        card = Card.from_json(rs, json.loads((CARDS / f"{name}.json").read_text())["card"])
        duel = CardDuel(rs)
        n2 = duel.n**2
        store, pat = duel.card_patterns(card)
        stores = [duel.opt_patterns, store]
        levels = [(r, np.concatenate([pat[r[: len(o)]], o]), opp, s) for r, opp, s, o in duel.levels]
        per_row = [a for lv in levels for a in lv]
        held = mb(*[a for s in stores for a in s if isinstance(a, np.ndarray)], *per_row)
        rep = duel.measure(card, tol=args.tol)
        per = rep.seconds / rep.sweeps
        entries = sum(len(s[1]) for s in stores)
        loss = 0.5 - (rep.first + rep.second) / 2
        row(name, n2, "patterns", len(duel.opt_patterns[3]) / duel.n, entries, held, per, rep.sweeps, loss)
        base = spelled_out(duel, stores, levels)
        held = mb(*[a for lv in base for a in lv])
        entries = sum(len(lv[3]) for lv in base)
        sweeper = duel.table.backend.level_sweep(base, 2 * n2)
        x = np.full(2 * n2, 0.5)
        sweeps, secs = sweep_to(sweeper, x, args.tol)
        loss = 0.5 - (x[duel.k0] + x[n2 + duel.k0]) / 2
        row(name, n2, "a row per pair", duel.n, entries, held, secs / sweeps, sweeps, loss)
        del base, sweeper
    print(f"peak resident memory of this run: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
