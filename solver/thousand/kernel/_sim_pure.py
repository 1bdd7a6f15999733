"""Pure-Python twin of the compiled game simulator (``ext/_sim.pyx``).

Same function, same arguments, same random numbers, so the same seed gives
the same games bit for bit; used under ``THOUSAND_PURE=1``, when the
extension is missing, and by the differential tests. Slow (a few hundred
times slower than the compiled loop): meant for tiny rulesets.

See :mod:`thousand.analysis.simulate` for the meaning of the arguments. Random numbers:
game ``g`` of a run seeded ``seed`` draws from its own xoshiro256** stream
whose state is four splitmix64 outputs started at ``seed + g * GAME_STRIDE``
(mod 2^64); a number below ``m`` is ``(r * m) >> 64`` for the next 64-bit
output ``r``. A roll of ``n`` dice is one such number below ``faces**n``: the
index of the ordered roll, mapped to its roll class by a lookup table.
"""

from __future__ import annotations

IMPLEMENTATION = "pure"

M64 = (1 << 64) - 1
GAME_STRIDE = 0xD1B54A32D192ED03
MUST_ROLL, FREE, CONFIRM = 0, 1, 2
OPTIMAL, HOLD, RANDOM = 0, 1, 2  # bot kinds: value tables (duel or race), hold at N points, random
BUST, END, WIN = 0, 1, 2


class Rng:
    """xoshiro256** seeded by splitmix64."""

    __slots__ = ("s0", "s1", "s2", "s3")

    def __init__(self, seed: int, game: int):
        x = (seed + game * GAME_STRIDE) & M64
        out = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            out.append(z ^ (z >> 31))
        self.s0, self.s1, self.s2, self.s3 = out

    def next(self) -> int:
        s0, s1, s2, s3 = self.s0, self.s1, self.s2, self.s3
        r = (s1 * 5) & M64
        r = (((r << 7) | (r >> 57)) & M64) * 9 & M64
        t = (s1 << 17) & M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & M64
        self.s0, self.s1, self.s2, self.s3 = s0, s1, s2, s3
        return r

    def below(self, m: int) -> int:
        return (self.next() * m) >> 64


def run(rolls, lookup, plans, unit, start0, start1, bots, race, games, seed, game0, max_turns, threads):
    """Play ``games`` games (numbered ``game0``...) of the two ``bots`` (each with ``kind``,
    ``param``, ``dec``, ``doff``, ``val``, ``voff``, ``blind``: see
    :func:`thousand.analysis.simulate._bot_policy`) on the roll classes ``rolls`` (a kernel
    ``Rolls``), the roll lookup ``lookup = (lut, lut_off, lut_size)`` and the turn ends
    ``plans`` (a kernel ``Plans``); returns ``(wins0, wins1, unfinished, sum_turns,
    sum_sq_turns)`` where the turns are counted over finished games (both players'
    turns in a duel)."""
    lut, lut_off, lut_size = lookup
    cls_instant, opt_ptr, opt_points, opt_used = rolls.cls_instant, rolls.opt_ptr, rolls.opt_points, rolls.opt_used
    dice, hot_mode = rolls.dice, rolls.hot_mode
    ptr, stop_ok, forced_ok, nxt, after = plans.ptr, plans.stop_ok, plans.forced_ok, plans.next, plans.after
    climbed, bust, score = plans.climbed, plans.bust, plans.score
    overtaken, pushed, on_barrel = plans.overtaken, plans.pushed, plans.on_barrel
    kinds, params = [b.kind for b in bots], [b.param for b in bots]
    (dec0, doff0, val0, voff0, blind0), (dec1, doff1, val1, voff1, blind1) = (
        (b.dec, b.doff, b.val, b.voff, b.blind) for b in bots
    )
    lut = lut.tolist()
    lut_off, lut_size = lut_off.tolist(), lut_size.tolist()
    inst = cls_instant.tolist()
    optp, optpts, optused = opt_ptr.tolist(), opt_points.tolist(), opt_used.tolist()
    ptr, sok, fok, nxt, after = ptr.tolist(), stop_ok.tolist(), forced_ok.tolist(), nxt.tolist(), after.tolist()
    climbed, bust, score = climbed.tolist(), bust.tolist(), score.tolist()
    overtaken, pushed, on_barrel = overtaken.tolist(), pushed.tolist(), on_barrel.tolist()
    decs, doffs = (dec0.tolist(), dec1.tolist()), (doff0.tolist(), doff1.tolist())
    vals, voffs = (val0.tolist(), val1.tolist()), (voff0.tolist(), voff1.tolist())
    blinds = (blind0, blind1)
    kinds, params = [int(k) for k in kinds], [int(p) for p in params]
    N = dice
    W = N + 2

    def turn(b, x, y, rng):
        """One turn of bot ``b`` in state ``x`` against ``y``: (BUST|END|WIN, plan row)."""
        prow = ptr[x]
        T = ptr[x + 1] - prow - 1
        kind = kinds[b]
        dec, val = decs[b], vals[b]
        dbase = vbase = 0
        if kind == OPTIMAL:
            dbase = doffs[b][x] + (0 if blinds[b] else y * (T + 2))
            vbase = voffs[b][x] + (0 if blinds[b] else y * (T + 2) * W)
        t, n, decide, confirming, want_stop = 0, N, False, False, False
        while True:
            if decide:
                k = min(t, T)
                if sok[prow + k]:
                    if kind == OPTIMAL:
                        stop = (dec[dbase + min(t, T + 1)] >> n) & 1 == 1
                    elif kind == HOLD:
                        stop = t * unit >= params[b] or nxt[prow + k] == -1
                    else:
                        stop = want_stop
                    if stop:
                        return END, prow + k
            c = lut[lut_off[n] + rng.below(lut_size[n])]
            if inst[c]:
                return WIN, 0
            o0, o1 = optp[c], optp[c + 1]
            if o0 == o1:
                return BUST, 0
            j = o0
            if kind == RANDOM:
                # uniform over the legal actions: each set-aside, then roll, or stop where allowed
                def stops(o):
                    k1 = min(t + optpts[o], T)
                    if fok[prow + k1] or (confirming and sok[prow + k1]):
                        return 0
                    if n == optused[o] and hot_mode != FREE:
                        return 0
                    return sok[prow + k1]

                cnt = sum(1 + stops(o) for o in range(o0, o1))
                pick = rng.below(cnt) if cnt > 1 else 0
                for o in range(o0, o1):
                    a = 1 + stops(o)
                    if pick < a:
                        j, want_stop = o, pick == 1
                        break
                    pick -= a
            elif o1 - o0 > 1:
                if kind == OPTIMAL:
                    best = None
                    for o in range(o0, o1):
                        t1 = t + optpts[o]
                        k1 = min(t1, T)
                        r = vbase + min(t1, T + 1) * W
                        if confirming and sok[prow + k1]:
                            a = val[r]
                        else:
                            left = n - optused[o]
                            a = val[r + (left if left else N + 1)]
                        if best is None or a > best:
                            best, j = a, o
                else:
                    bp, bu = -1, 0
                    for o in range(o0, o1):
                        if optpts[o] > bp or (optpts[o] == bp and optused[o] < bu):
                            bp, bu, j = optpts[o], optused[o], o
            t += optpts[j]
            left = n - optused[j]
            k = min(t, T)
            if fok[prow + k] or (confirming and sok[prow + k]):
                return END, prow + k
            confirming = False
            if left == 0:
                n = N
                decide = hot_mode == FREE
                confirming = hot_mode == CONFIRM
            else:
                n = left
                decide = True

    wins = [0, 0]
    unfinished = 0
    sum_turns = 0
    sum_sq = 0
    for g in range(game0, game0 + games):
        rng = Rng(seed, g)
        p = [start0, start1]
        mover = 0
        turns = 0
        winner = -1
        while turns < max_turns:
            turns += 1
            x = p[mover]
            y = p[1 - mover]
            what, row = turn(mover, x, y, rng)
            if what == WIN:
                winner = mover
                break
            if what == BUST:
                x = bust[x]
            else:
                x2 = nxt[row]
                if x2 == -1:
                    winner = mover
                    break
                if not race:
                    if climbed[row] and on_barrel[y]:
                        y = pushed[y]
                    if score[x] < score[y] < after[row]:
                        y = overtaken[y]
                x = x2
            if race:
                p[0] = x
            else:
                p[mover] = x
                p[1 - mover] = y
                mover = 1 - mover
        if winner < 0:
            unfinished += 1
        else:
            wins[winner] += 1
            sum_turns += turns
            sum_sq += turns * turns
    return wins[0], wins[1], unfinished, sum_turns, sum_sq
