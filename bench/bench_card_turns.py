"""The card's turns (docs/card.md): how a card's turns end, the pass every measurement of a
card runs, compiled against the pure twin's numpy pass in the same run.

A card decides by rule, not by value: it banks at its marks and sets aside by its worths.
Its turns are valued by ``thousand.kernel.ranked_end_distribution``, a forward pass of
probability mass; the baseline is the pure twin's (the numpy pass the card used before the
kernel had one). Two workloads:

* the card's **last turns** of an equal-turns game (``card_last_turns``): every state of the
  second seat against every final total of the first, columns laid out once per game
  (printed apart); by default six-dice scaled to a goal of 150 and of 300, as in
  docs/card.md, with six-dice's printed card;
* the card's **turns in a duel** (``CardDuel.card_patterns``' pass, ``card_turn_ends``): one
  column per mover and card row it meets, for a preset's shipped card (default
  classic-nobarrel); the duel's state space only, no duel table is needed.

Printed: columns, the longest turn (totals), seconds compiled, seconds pure, the speed-up,
and the largest difference of the results.

    python bench/bench_card_turns.py [--goals 150 300] [--presets classic-nobarrel]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from thousand import kernel
from thousand.analysis.card import (
    Card,
    _columns,
    card_last_turns,
    card_turn_ends,
    last_turn_columns,
    samosval_banks,
)
from thousand.engine.player import Moves
from thousand.engine.states import build_state_space
from thousand.rules import load_ruleset
from thousand.solvers.duel import DuelModel
from thousand.solvers.lastturn import last_turn_horizon

CARDS = Path(__file__).resolve().parents[1] / "docs" / "cards"
BACKENDS = ("compiled", "pure")


def card_of(name: str, rs) -> Card:
    return Card.from_json(rs, json.loads((CARDS / f"{name}.json").read_text())["card"])


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def row(*cells) -> None:
    print("| " + " | ".join(map(str, cells)) + " |", flush=True)


def last_turns(goal: int) -> None:
    over = [f"goal={goal}", f"barrel.threshold={goal - 50}", "pits=[]", "pit_attempts=0"]
    rs = load_ruleset("six-dice", over)
    card = replace(card_of("six-dice", load_ruleset("six-dice")), rs=rs)  # the preset's card, on this goal
    states = build_state_space(rs, opponents=True).states
    targets = np.arange(rs.goal, last_turn_horizon(rs, kernel.roll_table(rs), states) + 1, rs.unit)
    columns, laid = timed(lambda: last_turn_columns(rs, Moves(rs), states, targets))
    cols = len(columns.values)
    longest = max(len(c[1]) and int(c[1].max()) for c in columns.chunks) + 1
    got, secs = {}, {}
    for b in BACKENDS:
        got[b], secs[b] = timed(lambda b=b: card_last_turns(card, columns, kernel.backend(b).roll_table(rs)))
    diff = float(np.abs(got["compiled"] - got["pure"]).max())
    name = f"six-dice to {goal}: last turns ({len(states)} states x {len(targets)} totals; laid out in {laid:.1f} s)"
    row(
        name,
        f"{cols:,}",
        longest,
        f"{secs['compiled']:.2f}",
        f"{secs['pure']:.2f}",
        f"{secs['pure'] / secs['compiled']:.1f}x",
        f"{diff:.1e}",
    )


def duel_turns(name: str) -> None:
    rs = load_ruleset(name)
    card = card_of(name, rs)
    model = DuelModel(rs)
    plans, score, n = model.plans, model.score, model.n
    gap = score[:, None] - score[None, :]
    bands = np.searchsorted(np.asarray(card.edges), gap, side="right")
    turns = []
    for i in range(n):
        a, b = plans.ptr[i], plans.ptr[i + 1]
        shun = samosval_banks(rs, int(score[i]), b - a)
        for k in np.unique(bands[i]):
            nxt = plans.next[a:b]
            turns.append((plans.stop_ok[a:b], plans.forced_ok[a:b], (nxt == -1).astype(np.uint8), int(k), shun))
    args = _columns(card, turns)
    got, secs = {}, {}
    for b in BACKENDS:
        got[b], secs[b] = timed(lambda b=b: card_turn_ends(kernel.backend(b).roll_table(rs), *args))
    diff = max(float(np.abs(x - y).max()) for x, y in zip(got["compiled"], got["pure"]))
    row(
        f"{name}: the card's turns in the duel",
        f"{len(turns):,}",
        int(args[3].max()) + 1,
        f"{secs['compiled']:.2f}",
        f"{secs['pure']:.2f}",
        f"{secs['pure'] / secs['compiled']:.1f}x",
        f"{diff:.1e}",
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--goals", type=int, nargs="*", default=[150, 300])
    ap.add_argument("--presets", nargs="*", default=["classic-nobarrel"])
    args = ap.parse_args()
    row(
        "workload",
        "columns",
        "longest turn (totals)",
        "compiled s",
        "pure s (baseline)",
        "speed-up",
        "largest difference",
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for goal in args.goals:
        last_turns(goal)
    for name in args.presets:
        duel_turns(name)


if __name__ == "__main__":
    main()
