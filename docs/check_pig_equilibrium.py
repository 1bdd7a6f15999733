"""Check an exported equilibrium of Pig from the file alone (it imports numpy, not thousand).

    python docs/check_pig_equilibrium.py pig-3.npz

The file is written by ``thousand tables export pig --players N --out pig-3.npz``; its
format is docs/export.md. Pig's rules, written here from docs/rules.md and not read from the
solver: a turn rolls one six-faced die; a 1 ends it with nothing banked, any other face adds
to the turn total; the player may stop after any roll that scored and bank the total; the
first player whose banked score reaches the goal wins at once.

What it checks, for every state of the file (a row: the scores of the player to move and
then of the others in the order they move, and every player's chance in that order):

1. the chances of a state sum to 1;
2. the mover's chance is its best one-turn answer to the file's values: with
   ``B(t)`` its chance when it banks ``t`` (1 at the goal, else its entry, the last, in the
   state that follows) and ``Z`` its chance after a 1 (the state that follows a bust),

       R(t) = max( B(t) if t > 0,  Z/6 + sum over faces f = 2..6 of R(t + f)/6 ),

   the mover's chance is ``R(0)`` (a turn starts with a roll). The largest gap over the
   states is the certificate: how much any mover could gain by playing its turn otherwise
   (at a state where the mover mixes, both policies it mixes are best, so the gap is 0
   there too);
3. every other player's chance follows from the mover's turn: playing its best (stopping
   where banking is worth more than rolling on), each turn end leads to a state whose whole
   row the file holds, and

       C(t) = the row of the banked state if the mover stops at t,
              else  (row after a 1)/6 + sum over f = 2..6 of C(t + f)/6,

   must give the state's own row at t = 0, for every seat. A state where stopping and
   rolling tie within 1e-12 somewhere in the turn (its policy is the solver's choice of two
   equals) is left out and counted;
4. at every mixed state (``mixed``: the row and the weight), the two policies the file
   names (``mixed_options``: each one's chance of a bust and every player's chance from its
   banks and wins) are the rules' best turns at the breakpoint -- the turn above rolls
   where rolling and stopping tie, the one below stops there -- and the state's row is
   their mixture: weight x (the turn above) + (1 - weight) x (the turn below), each
   turn's row being its banks' and wins' chances plus its chance of a bust times the row
   after a 1.

It prints the largest errors; an equilibrium has them at rounding (about 1e-15).
"""

from __future__ import annotations

import sys

import numpy as np


class PigFile:
    """An export of Pig: its values, and the rows of states by the players' scores."""

    def __init__(self, path: str):
        data = np.load(path)
        if int(data["seats"]) != 1:
            raise SystemExit("equal turns: the mover's seat is part of the state; this script checks the plain game")
        self.data, self.values, self.N = data, data["values"], int(data["players"])
        rules = str(data["ruleset"])
        self.goal = int(next(line.split("=")[1] for line in rules.splitlines() if line.startswith("goal")))
        self.scores = data["states"][:, list(data["fields"]).index("score")]
        self.m = len(self.scores)
        self.row_of_score = np.zeros(self.goal, dtype=np.int64)
        self.row_of_score[self.scores] = np.arange(self.m)

    def row(self, scores) -> int:
        """The row of the state where the players have ``scores``, the mover first."""
        return int(sum(self.row_of_score[x] * self.m ** (self.N - 1 - k) for k, x in enumerate(scores)))

    def turn(self, scores, z: float, tie: str = "stop"):
        """The mover's best turn in the state ``scores`` (mover first) when its chance after a
        1 is ``z`` (the others' chances after a 1 are the file's): its chance of a bust and
        every player's chance from its banks and wins, mover first, and the totals where
        stopping and rolling on tie within 1e-12 (``tie`` says which it then does)."""
        N, goal = self.N, self.goal
        me, rest = scores[0], tuple(scores[1:])
        won = np.zeros(N)
        won[0] = 1.0
        # R: the mover's chance; P: the chance of a bust; A: every chance from the banks
        R, P, A = {}, {}, {}
        ties = []
        for t in range(goal + 5, -1, -1):
            if me + t >= goal:
                R[t], P[t], A[t] = 1.0, 0.0, won
                continue
            roll = z / 6 + sum(R[t + f] for f in range(2, 7)) / 6
            roll_p = 1 / 6 + sum(P[t + f] for f in range(2, 7)) / 6
            roll_a = sum(A[t + f] for f in range(2, 7)) / 6
            if t == 0:
                return roll_p, roll_a, ties
            banked = np.roll(self.values[self.row(rest + (me + t,))], 1)  # mover first
            if abs(banked[0] - roll) <= 1e-12:
                ties.append(t)
            if banked[0] > roll + 1e-12 or (tie == "stop" and banked[0] >= roll - 1e-12):
                R[t], P[t], A[t] = banked[0], 0.0, banked
            else:
                R[t], P[t], A[t] = roll, roll_p, roll_a
        raise AssertionError("unreachable")

    def after_bust(self, scores) -> np.ndarray:
        """The row after the mover's 1, mover first (the mover keeps its score)."""
        return np.roll(self.values[self.row(tuple(scores[1:]) + (scores[0],))], 1)


def check_mixed(f: PigFile) -> tuple[int, float, float]:
    """Check 4: at each mixed state, the two policies of the file against the rules' best
    turns at the breakpoint, and the state's row against their mixture."""
    named, mixture = 0.0, 0.0
    mixed, options = f.data["mixed"], f.data["mixed_options"]
    for (row, weight), opts in zip(mixed, options):
        row = int(row)
        scores = tuple(int(f.scores[(row // f.m ** (f.N - 1 - k)) % f.m]) for k in range(f.N))
        after = f.after_bust(scores)
        mix = np.zeros(f.N)
        for side, tie, share in ((0, "stop", 1.0 - weight), (1, "roll", weight)):
            b, A, _ties = f.turn(scores, after[0], tie)
            named = max(named, abs(b - opts[side, 0]), float(np.max(np.abs(A - opts[side, 1:]))))
            mix += share * (opts[side, 1:] + opts[side, 0] * after)
        mixture = max(mixture, float(np.max(np.abs(mix - f.values[row]))))
    return len(mixed), named, mixture


def check(path: str) -> tuple[float, float, float]:
    f = PigFile(path)
    data, values, goal, scores, m, N = f.data, f.values, f.goal, f.scores, f.m, f.N
    sums = float(np.max(np.abs(values.sum(axis=1) - 1.0)))

    # every state as the rows of its players' scores, mover first
    flat = np.arange(m**N)
    rows = np.stack([(flat // m ** (N - 1 - k)) % m for k in range(N)], axis=1)
    others = rows[:, 1:]

    def after(mover_rows: np.ndarray) -> np.ndarray:
        """The flat index of the state that follows: the others in order, the mover last."""
        nxt = np.concatenate([others, mover_rows[:, None]], axis=1)
        return (nxt * (m ** np.arange(N - 1, -1, -1))).sum(axis=1)

    me = scores[rows[:, 0]]
    bust_rows = after(rows[:, 0])
    bust = values[bust_rows, N - 1]
    row_of_score = f.row_of_score
    won_row = np.zeros(N)
    won_row[N - 1] = 1.0  # the mover wins: in the order of the next state, the mover is last
    # R(t) (the mover's best) and C(t) (every chance, in the next state's order) from the
    # largest total down; the six totals above t are all a roll reaches
    R = {t: np.ones(m**N) for t in range(goal + 1, goal + 7)}
    C = {t: np.broadcast_to(won_row, (m**N, N)) for t in range(goal + 1, goal + 7)}
    ties = np.zeros(m**N, dtype=bool)
    for t in range(goal, -1, -1):
        total = me + t
        won = total >= goal
        roll = bust / 6 + sum(np.where(total + f >= goal, 1.0, R[t + f]) / 6 for f in range(2, 7))
        roll_c = values[bust_rows] / 6 + sum(
            np.where((total + f >= goal)[:, None], won_row, C[t + f]) / 6 for f in range(2, 7)
        )
        if t == 0:
            R0, C0 = roll, roll_c
            break
        banked = values[after(row_of_score[np.minimum(total, goal - 1)])]
        bank = np.where(won, 1.0, banked[:, N - 1])
        stop = won | (bank > roll)
        ties |= ~won & (np.abs(bank - roll) <= 1e-12)
        R[t] = np.where(won, 1.0, np.maximum(bank, roll))
        C[t] = np.where(won[:, None], won_row, np.where(stop[:, None], banked, roll_c))
        R.pop(t + 6, None)
        C.pop(t + 6, None)
    gap = float(np.max(np.abs(R0 - values[:, 0])))
    # the next state's order (the others, then the mover) back to the mover first
    C0 = np.roll(C0, 1, axis=1)
    mixed = np.zeros(m**N, dtype=bool)
    mixed[data["mixed"][:, 0].astype(np.int64)] = True
    pure = ~mixed & ~ties
    seats = float(np.max(np.abs(C0[pure] - values[pure]))) if pure.any() else 0.0
    print(f"{int(mixed.sum())} mixed states and {int((ties & ~mixed).sum())} with a tie left out of check 3")
    k, named, mixture = check_mixed(f)
    print(
        f"{k} mixed states: their two policies are the rules' best turns within {named:.1e}; "
        f"every seat's chance follows their mixture within {mixture:.1e}"
    )
    return sums, gap, seats


if __name__ == "__main__":
    sums, gap, seats = check(sys.argv[1])
    print(
        f"chances sum to 1 within {sums:.1e}; the mover's chance is its best turn within {gap:.1e}; "
        f"every seat's chance follows the mover's turn within {seats:.1e}"
    )
