// thousand: the advisor of the static app (thousand web build), which answers with no server.
//
// One more twin of the kernel's turn DP (thousand.kernel.turn_dp, ext/_kernel.pyx and its pure
// twin) and of the duel advice on top of it (thousand.solvers.advice: TurnEnds.of,
// duel_end_values, duels_advisor, TurnAdvisor.advise). What it reads is the build's: the roll
// classes of the kernel (every roll's set-asides and probability), the duel table's values
// and states, and per number of players the method and heading the advice layer chose
// (thousand.web.static_build); the rules of a turn are rules.js's. tests/test_static_app.py
// holds it to the Python advisor on seeded random situations of every family, in the browser.
//
// The Bellman equation of one turn, for total t (in units) and n dice to roll:
//   R(t, n) = P(bust) Z + P(instant) W + sum over scoring rolls r of P(r) max over set-asides
//             (x, u) of A(t + x, n - u),
//   V(t, n) = max(stop[t], R(t, n)) where banking t is allowed, else R(t, n),
//   A(t, m) = forced[t] where a total ends the turn (samosval mid-turn, overshoot), else
//             V(t, m) for m >= 1 and for m = 0 (hot dice) V(t, N), R(t, N) or RC(t) as the
//             rules' hot dice say;
// totals above T (the saturation) behave alike and their hot-dice cycle is solved by Newton's
// method on the convex piecewise-linear fixed point, as the kernel does.
"use strict";

const ThousandAdvisor = (() => {
  const MUST_ROLL = 0, FREE = 1, CONFIRM = 2;
  const WIN = "win";
  const VALUE_TIE = 1e-12;

  // ---------------------------------------------------------------- the roll classes

  // per dice count n (index n - 1): the scoring classes' probabilities, their set-asides'
  // points and dice left (flattened, with each class's first option), P(bust), P(instant win)
  function rollsByDice(r) {
    const out = [];
    for (let n = 1; n <= r.dice; n++) {
      const probs = [], pts = [], left = [], seg = [];
      let bust = 0, inst = 0;
      for (let k = r.cls_ptr[n]; k < r.cls_ptr[n + 1]; k++) {
        const lo = r.opt_ptr[k], hi = r.opt_ptr[k + 1];
        if (r.cls_instant[k]) { inst += r.cls_prob[k]; continue; }
        if (hi === lo) { bust += r.cls_prob[k]; continue; }
        probs.push(r.cls_prob[k]);
        seg.push(pts.length);
        for (let o = lo; o < hi; o++) { pts.push(r.opt_points[o]); left.push(n - r.opt_used[o]); }
      }
      seg.push(pts.length);
      out.push({ probs, pts, left, seg, bust, inst });
    }
    return out;
  }

  // ---------------------------------------------------------------- the turn DP

  // ends: {sOk, sVal, fOk, fVal} per total 0..T, bust, win (one column: the advice's values)
  function turnDP(per, dice, hot, ends) {
    const T = ends.sOk.length - 1, L = T + 2;
    const ext = (a) => { const b = a.slice(); b.push(a[T]); return b; };
    const sOk = ext(ends.sOk), sVal = ext(ends.sVal), fOk = ext(ends.fOk), fVal = ext(ends.fVal);
    const Z = ends.bust, W = ends.win;
    const table = () => Array.from({ length: L }, () => new Float64Array(dice + 1));
    const V = table(), R = table(), A = table(), AC = table(), RC = new Float64Array(L);

    function roll(t, n, Atab) {
      const p = per[n - 1];
      let val = p.bust * Z + p.inst * W;
      for (let c = 0; c < p.probs.length; c++) {
        let best = -Infinity;
        for (let o = p.seg[c]; o < p.seg[c + 1]; o++) {
          const v = Atab[Math.min(t + p.pts[o], L - 1)][p.left[o]];
          if (v > best) best = v;
        }
        val += p.probs[c] * best;
      }
      return val;
    }
    function settle(t, n, r) {
      R[t][n] = r;
      V[t][n] = sOk[t] && sVal[t] >= r ? sVal[t] : r;
    }
    function solveTotal(t) {
      for (let n = 1; n <= dice; n++) settle(t, n, roll(t, n, A));
      if (hot === CONFIRM) RC[t] = roll(t, dice, AC);
    }
    function hotValue(t) { return hot === FREE ? V[t][dice] : hot === MUST_ROLL ? R[t][dice] : RC[t]; }
    function fillConfirm(t) {
      if (sOk[t]) AC[t].fill(sVal[t]);
      else AC[t].set(A[t]);
    }
    function arrive(t) {
      if (fOk[t]) { A[t].fill(fVal[t]); AC[t].fill(fVal[t]); return; }
      for (let n = 1; n <= dice; n++) A[t][n] = V[t][n];
      A[t][0] = hotValue(t);
      fillConfirm(t);
    }
    // the tail's hot-state value implied by a guess h, and its slope
    function tailRoll(n, a, da) {
      const p = per[n - 1];
      let val = p.bust * Z + p.inst * W, dval = 0;
      for (let c = 0; c < p.probs.length; c++) {
        let arg = p.seg[c];
        for (let o = p.seg[c] + 1; o < p.seg[c + 1]; o++) if (a[p.left[o]] > a[p.left[arg]]) arg = o;
        val += p.probs[c] * a[p.left[arg]];
        dval += p.probs[c] * da[p.left[arg]];
      }
      return [val, dval];
    }
    function tailEval(h, t) {
      const a = new Float64Array(dice + 1), da = new Float64Array(dice + 1);
      a[0] = h; da[0] = 1;
      const stop = sOk[t] ? sVal[t] : null;
      let r = 0, dr = 0;
      for (let n = 1; n <= dice; n++) {
        [r, dr] = tailRoll(n, a, da);
        if (stop !== null && stop >= r) { a[n] = stop; da[n] = 0; } else { a[n] = r; da[n] = dr; }
      }
      if (hot === FREE) return [a[dice], da[dice]];
      if (hot === MUST_ROLL) return [r, dr];
      const ac = stop !== null ? new Float64Array(dice + 1).fill(stop) : a;
      const dac = stop !== null ? new Float64Array(dice + 1) : da;
      return tailRoll(dice, ac, dac);
    }
    function solveTail() {
      const t = L - 1;
      if (fOk[t]) { arrive(t); solveTotal(t); return; }
      let h = sOk[t] ? Math.min(Z, W, sVal[t]) : Math.min(Z, W);
      for (let k = 0; k < 200; k++) {
        const [fh, slope] = tailEval(h, t);
        if (Math.abs(fh - h) <= 1e-15 * Math.max(1, Math.abs(h))) { h = fh; break; }
        h = slope < 1 ? (fh - slope * h) / (1 - slope) : fh;
      }
      A[t][0] = h;
      for (let n = 1; n <= dice; n++) { settle(t, n, roll(t, n, A)); A[t][n] = V[t][n]; }
      fillConfirm(t);
      if (hot === CONFIRM) RC[t] = roll(t, dice, AC);
      A[t][0] = hotValue(t);
      if (!sOk[t]) AC[t].set(A[t]);
    }

    solveTail();
    for (let t = L - 2; t >= 0; t--) { solveTotal(t); arrive(t); }
    return { T, V, R, RC, sVal: ends.sVal, fVal: ends.fVal, bust: Z, win: W, row: (t) => Math.min(t, L - 1) };
  }

  // ---------------------------------------------------------------- the duel table

  class DuelTable {
    // data: the ruleset's build file; block(k): a promise of the k-th block of rows as stored
    // (the build's data/tables/<name>.duel/<k>.bin), read when a decision first needs it
    constructor(data, block) {
      const tb = data.table;
      this.name = data.name;
      this.fixed = tb.encoding === "fixed32";
      this.scale = this.fixed ? tb.scale : 1;
      this.rows = tb.rows_per_block;
      this.block = block;
      this.blocks = new Map();  // k -> the block's values, or the promise of them
      const F = 9, st = data.states;
      this.n = st.length / F;
      if (tb.count !== this.n * this.n) throw new Error(`${data.name}: the table does not match its states`);
      this.index = new Map();
      for (let i = 0; i < this.n; i++) this.index.set(st.slice(i * F, i * F + F).join(","), i);
    }

    // a player state's row; a state the table does not hold is an error, as in the Python advisor
    stateIndex(x) {
      const key = [x.score, x.opened ? 1 : 0, x.bolts, x.pit_tries, x.pit_entry, x.barrel_tries, x.barrel_entry, x.falls, x.overshoots].join(",");
      const i = this.index.get(key);
      if (i === undefined) throw new Error(`the two-player table has no state ${key}`);
      return i;
    }

    // read the blocks holding ``rows`` (each block once, however many ask)
    async need(rows) {
      const ks = [...new Set([...rows].map((i) => Math.floor(i / this.rows)))];
      await Promise.all(ks.map((k) => {
        if (!this.blocks.has(k)) {
          const rowsHere = Math.min(this.rows, this.n - k * this.rows);
          this.blocks.set(k, this.block(k).then((buf) => {
            const v = this.fixed ? new Uint32Array(buf) : new Float64Array(buf);
            if (v.length !== rowsHere * this.n) throw new Error(`${this.name}: block ${k} of the table does not match its states`);
            this.blocks.set(k, v);
            return v;
          }).catch((e) => { this.blocks.delete(k); throw e; }));
        }
        return this.blocks.get(k);
      }));
    }

    // P(mover wins) for the mover's row i against the opponent's row j (row i read by need)
    P(i, j) {
      const k = Math.floor(i / this.rows);
      return this.blocks.get(k)[(i - k * this.rows) * this.n + j] / this.scale;
    }
  }

  // the duels' chances q (one per opponent) combined: their product, or the odds of a race of
  // steady finishers (thousand.solvers.approx.combine_duels)
  function combine(q, method) {
    let prod = 1;
    for (const v of q) prod *= v;
    if (method === "product") return prod;
    let others = 0;
    for (let j = 0; j < q.length; j++) {
      let rest = 1 - q[j];
      for (let k = 0; k < q.length; k++) if (k !== j) rest *= q[k];
      others += rest;
    }
    const den = prod + others;
    return den > 0 ? prod / den : 0;
  }

  // ---------------------------------------------------------------- one turn's ends and values

  class Advisor {
    // block(k): the k-th block of the duel table's rows (null: equal turns, the last turn only)
    constructor(data, block) {
      this.data = data;
      this.rs = data.engine;
      this.turns = new ThousandRules.Turns(this.rs);
      this.moves = this.turns.moves;
      this.per = rollsByDice(data.rolls);
      this.table = data.table ? new DuelTable(data, block) : null;  // equal turns: the last turn only
      // whether a bank moves the other players (overtaking, push-off off the barrel)
      this.interacts = !!this.rs.overtake || (this.rs.barrel.kind !== "none" && this.rs.barrel.push_off !== "none");
      this.solved = new Map();
    }

    // a total (points) from which every larger total ends the turn alike (Moves.saturation)
    saturation(x) {
      const rs = this.rs, b = rs.barrel;
      let top = rs.goal;
      if (b.kind === "points" && !this.moves.onBarrel(x.score)) top = b.threshold;
      if (b.kind === "exact") top = rs.goal + rs.unit;
      if (rs.dump_mid_turn) for (const d of rs.dump) if (d > x.score) top = Math.max(top, d + rs.unit);
      return Math.max(top - x.score, rs.unit, rs.min_bank);
    }

    // how a turn from x ends at every total 0..T units (TurnEnds.of)
    ends(x, T) {
      const m = this.moves, u = this.rs.unit;
      const e = { T, sOk: new Array(T + 1).fill(0), fOk: new Array(T + 1).fill(0), next: new Array(T + 1).fill(null), event: new Array(T + 1).fill(null) };
      for (let t = 1; t <= T; t++) {
        const pts = t * u, ev = m.midTurn(x, pts);
        if (ev) { e.fOk[t] = 1; e.event[t] = ev; e.next[t] = m.midTurnEnd(x, pts, ev); }
        else if (m.canBank(x, pts)) { e.sOk[t] = 1; e.next[t] = m.bank(x, pts); }
      }
      e.bust = m.zero(x);
      return e;
    }

    // the opponent after the mover's end at total t, as duel_end_values reads it: pushed off
    // the barrel and overtaken where the rules interact (an overshoot reaches nothing)
    affected(x, e, t, y) {
      const m = this.moves, rs = this.rs;
      if (!this.interacts || e.event[t] === "overshoot") return y;
      return m.overtaken(m.pushOff(y, m.climbed(x, e.next[t])), x.score, m.raisedTo(x, t * rs.unit));
    }

    turnT(x, total) { return Math.floor(Math.max(this.saturation(x), total) / this.rs.unit); }

    // the table's rows a decision of x against ``opponents`` reads: each opponent as every end
    // of the turn leaves them, and the mover's own (the strongest opponent is found on it)
    rowsFor(x, opponents, total) {
      const e = this.endsOf(x, this.turnT(x, total)), tb = this.table;
      const rows = new Set([tb.stateIndex(x)]);
      for (const y of opponents) {
        rows.add(tb.stateIndex(y));
        for (let t = 1; t <= e.T; t++) if (e.next[t] !== null && e.next[t] !== WIN) rows.add(tb.stateIndex(this.affected(x, e, t, y)));
      }
      return rows;
    }

    // the mover's duel chance after each end against every opponent (duel_end_values):
    // vals[t][k] = 1 for a win, else 1 - P(y_k after the end, x after the end)
    endChances(x, e, opponents) {
      const tb = this.table;
      const yi = opponents.map((y) => tb.stateIndex(y));
      const vals = [];
      for (let t = 0; t <= e.T; t++) {
        const x2 = e.next[t];
        if (t === 0 || x2 === null) { vals.push(opponents.map(() => 0)); continue; }
        if (x2 === WIN) { vals.push(opponents.map(() => 1)); continue; }
        const xi = tb.stateIndex(x2);
        vals.push(opponents.map((y) => 1 - tb.P(tb.stateIndex(this.affected(x, e, t, y)), xi)));
      }
      const bi = tb.stateIndex(e.bust);
      return { vals, bust: yi.map((j) => 1 - tb.P(j, bi)) };
    }

    // what ``make`` gives for ``key`` (turn ends and DPs), kept: the decisions of one turn ask
    // for the same ones again
    kept(key, make) {
      let got = this.solved.get(key);
      if (!got) {
        if (this.solved.size >= 64) this.solved.clear();
        got = make();
        this.solved.set(key, got);
      }
      return got;
    }

    // the ends of a turn of x to T units, kept (the rows a decision reads and its DP ask for them)
    endsOf(x, T) { return this.kept(JSON.stringify(["ends", x, T]), () => this.ends(x, T)); }

    // the turn of x solved with the end values of ``method`` against ``opponents``
    solve(x, opponents, method, total) {
      const T = this.turnT(x, total);
      return this.kept(JSON.stringify([x, opponents, method, T]), () => {
        const e = this.endsOf(x, T);
        const { vals, bust } = this.endChances(x, e, opponents);
        const sVal = vals.map((q) => combine(q, method));
        return turnDP(this.per, this.data.rolls.dice, this.data.rolls.hot_mode, { sOk: e.sOk, sVal, fOk: e.fOk, fVal: sVal, bust: combine(bust, method), win: 1 });
      });
    }

    // the last turn of an equal-turns round with nobody after it (last_turn_advisor): a bank
    // that meets the win condition with a final total G wins above ``toBeat``, shares a tie
    // with the ``tied`` players holding it (1 / (tied + 1)) and loses below it; every other end
    // (a bank short of the win condition, a forced end, a bust) loses
    solveLastTurn(x, toBeat, tied, total) {
      const m = this.moves, rs = this.rs, u = rs.unit;
      let top = this.saturation(x);
      if (m.wins(x, rs.goal - x.score)) top = Math.max(top, toBeat + u - x.score);
      const T = Math.floor(Math.max(top, total) / u);
      return this.kept(JSON.stringify(["last", x, toBeat, tied, T]), () => {
        const e = this.ends(x, T);
        const sVal = e.next.map((y, t) => {
          if (!e.sOk[t] || y !== WIN) return 0;
          const G = x.score + t * u;
          return G > toBeat ? 1 : G === toBeat ? 1 / (tied + 1) : 0;
        });
        return turnDP(this.per, this.data.rolls.dice, this.data.rolls.hot_mode, { sOk: e.sOk, sVal, fOk: e.fOk, fVal: sVal.map(() => 0), bust: 0, win: 1 });
      });
    }

    // the DP value of a turn end or of a state before a roll (SolvedTurn.value)
    nodeValue(dp, node) {
      const u = this.rs.unit;
      if (node.end) {
        if (node.end === "stop") return dp.sVal[Math.min(node.total / u, dp.T)];
        if (node.end === "forced") return dp.fVal[Math.min(node.total / u, dp.T)];
        return node.end === "win" ? dp.win : dp.bust;
      }
      const row = dp.row(node.total / u);
      return this.turns.confirming(node) ? dp.RC[row] : dp.R[row][node.dice];
    }

    // every option of the decision {player, total, dice, roll} with its value, the best first
    // (TurnAdvisor.advise): [{action, keep, points, then, value, next}], ``then`` the engine's
    // word for what follows (stop, roll, compulsory, confirmed, ends: dump/overshoot)
    options(s, dp) {
      const x = s.player, tr = this.turns;
      const opts = [], notes = [];
      if (s.roll === null) {
        opts.push({ action: "roll", then: "roll", dice: s.dice, value: this.nodeValue(dp, s) });
        if (tr.canStop(s)) {
          opts.push({ action: "stop", then: "stop", value: this.nodeValue(dp, tr.stop(s)) });
          const warn = this.bankWarning(x, s.total);
          if (warn) notes.push(warn);
        } else if (s.total > 0) notes.push({ key: "adv_cannot_stop", why: tr.stopRefusal(s) });
      } else {
        const after = tr.afterRoll({ ...s, roll: null }, s.roll);
        if (after.end) {
          opts.push({ action: after.end, then: after.end, value: this.nodeValue(dp, after) });
        } else {
          let banks = false;
          for (const [points, kept] of tr.setAsides(after.roll)) {
            const nxt = tr.keep(after, kept);
            const base = { action: "keep", keep: kept, points };
            if (nxt.end) {
              const then = nxt.end === "stop" ? "confirmed" : nxt.event;
              banks = banks || nxt.end === "stop";
              opts.push({ ...base, then, value: this.nodeValue(dp, nxt) });
            } else if (tr.compulsory(nxt)) {
              opts.push({ ...base, then: tr.confirming(nxt) ? "confirm" : "compulsory", dice: nxt.dice, value: this.nodeValue(dp, nxt) });
            } else {
              if (tr.canStop(nxt)) { banks = true; opts.push({ ...base, then: "stop", value: this.nodeValue(dp, tr.stop(nxt)) }); }
              opts.push({ ...base, then: "roll", dice: nxt.dice, value: this.nodeValue(dp, nxt) });
            }
          }
          if (!banks) {
            const first = tr.keep(after, tr.setAsides(after.roll)[0][1]);
            if (!first.end) notes.push({ key: "adv_no_stop_after", why: tr.stopRefusal(first) });
          }
        }
      }
      opts.sort((a, b) => b.value - a.value);
      return { options: opts, notes };
    }

    // what banking t would do that a player may not expect: samosval, the barrel's cap
    bankWarning(x, t) {
      const y = this.moves.bank(x, t), s1 = x.score + t;
      if (y === WIN || y.score === s1) return null;
      if (y.score === 0 && this.rs.dump.includes(s1)) return { key: "adv_samosval", t, s: s1 };
      return { key: "adv_barrel_cap", t, score: y.score, s: s1 };
    }

    // the method for ``players`` seats: the plan the build wrote (the advice layer's choice)
    plan(players, lang) {
      const plans = this.data.plans[lang] || this.data.plans.en;
      return plans[String(players)];  // the build writes every number of players the page allows
    }

    // the advice for the player to move in a game of rules.js (Advisors.situation: the mover,
    // the others in the order they move next; with equal turns and a finished player, the
    // round's last turns), in the shape of the server's advice_json; ``words`` the page's
    // words (with the advice's, adv_...), ``lang`` the language of the heading
    async advise(game, words, lang) {
      const tr = game.turn, x = tr.player, n = game.names.length;
      const s = { player: x, total: tr.total, dice: tr.dice, roll: tr.roll };
      const finished = Object.entries(game.finished).map(([j, f]) => [Number(j), f]);
      if (this.rs.equal_turns && finished.length) {
        const last = this.data.last_turn[lang] || this.data.last_turn.en;
        if (game.current < n - 1) return { method: last.why_later, method_id: "missing", exact: false, options: null };
        const F = Math.max(...finished.map(([, f]) => f)), tied = finished.filter(([, f]) => f === F).length;
        const heading = (tied === 1 ? last.heading_alone : last.heading.replace("{k}", tied)).replace("{total}", F);
        const got = this.options(s, this.solveLastTurn(x, F, tied, s.total));
        return this.present(got, { method: "last turn", exact: true, heading, value: "win_probability" }, words, "");
      }
      if (!this.table) return { method: this.data.why[lang] || this.data.why.en, method_id: "missing", exact: false, options: null };
      const others = [];
      for (let k = 1; k < n; k++) others.push((game.current + k) % n);
      const opponents = others.map((j) => game.states[j]);
      await this.table.need(this.rowsFor(x, opponents, s.total));
      const plan = this.plan(others.length + 1, lang);
      let against = opponents, heading = plan.heading;
      if (plan.method === "duel") heading = heading.replace("{other}", game.names[others[0]]);
      if (plan.method === "strongest") {  // the opponent against whom the mover's duel chance is lowest
        const me = this.table.stateIndex(x), chance = (y) => this.table.P(me, this.table.stateIndex(y));
        let j = 0;
        opponents.forEach((y, k) => { if (chance(y) < chance(opponents[j])) j = k; });
        against = [opponents[j]];
        heading = heading.replace("{name}", game.names[others[j]]);
      }
      const method = plan.method === "duel" || plan.method === "strongest" ? "product" : plan.method;
      const got = this.options(s, this.solve(x, against, method, s.total));
      const value = plan.method === "duel" ? "win_probability" : plan.method === "product" ? "duel_product" : "estimated_win_probability";
      const rounding = this.data.table.note[lang] || this.data.table.note.en;
      return this.present(got, { method: plan.method, exact: plan.exact, heading, value }, words, rounding);
    }

    // options and notes in the player's words (Option.label, Advice.headline and worth)
    present(got, how, words, rounding) {
      const value = how.value;
      const w = (k) => words[k] || k;
      const fill = (text, p) => text.replace(/\{(\w+)\}/g, (m, k) => (k in p ? p[k] : m));
      const then = (o) => {
        if (o.then === "roll") return fill(w("adv_roll"), { n: o.dice });
        if (o.then === "stop") return w("adv_stop");
        if (o.then === "compulsory") return fill(w("adv_roll_compulsory"), { n: o.dice });
        if (o.then === "confirm") return fill(w("adv_roll_confirm"), { n: o.dice });
        if (o.then === "confirmed") return w("adv_banked_confirmed");
        if (o.then === "win") return w("adv_instant_win");
        if (o.then === "bust") return w("adv_bust");
        return fill(w("adv_turn_ends"), { event: w("adv_" + o.then) });
      };
      const label = (o) => (o.action === "keep" ? fill(w("adv_keep"), { dice: o.keep.join(","), points: o.points, then: then(o) }) : then(o));
      const percent = (p) => (p === 0 || p >= 0.001 ? `${(100 * p).toFixed(1)}%` : `${Number((100 * p).toPrecision(2))}%`);
      const worth = (v) => fill(w("adv_worth_" + value), { p: percent(v), r: v.toFixed(4) });
      const opts = got.options;
      const cap = (text) => text.charAt(0).toUpperCase() + text.slice(1);
      let headline = fill(w("adv_headline"), { what: cap(label(opts[0])), worth: worth(opts[0].value) });
      if (opts.length > 1) headline += "; " + fill(w("adv_next_best"), { what: label(opts[1]), worth: worth(opts[1].value) });
      const refusal = (why) => fill(w(why.key), why.params);
      const notes = got.notes.map((n) => (n.why ? fill(w(n.key), { why: refusal(n.why) }) : fill(w(n.key), n)));
      if (rounding) notes.push(rounding);
      const labels = { win_probability: "adv_label_win_probability", duel_product: "adv_label_duel_product", estimated_win_probability: "adv_label_estimated" };
      return {
        method: how.heading,
        method_id: how.method,
        exact: how.exact,
        value,
        value_label: w(labels[value]),
        headline,
        note: notes.join("; ") || null,
        others: [],
        options: opts.map((o) => ({ action: o.action, label: label(o), [value]: o.value, ...(o.action === "keep" ? { keep: o.keep, points: o.points, then: then(o) } : {}) })),
      };
    }
  }

  return { Advisor, DuelTable, turnDP, rollsByDice, combine, VALUE_TIE };
})();
