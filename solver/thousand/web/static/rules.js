// thousand: the scorekeeper's rules in the page, so that a game goes on with the server away.
//
// The twin of the Python engine for keeping score: the scoring of a roll
// (thousand.rules.scoring.RollScorer), a turn in play (thousand.engine.turn.TurnRules,
// finish_turn, next_in_round, round_winners), what a turn does to a player
// (thousand.engine.player.Moves) and the game as its log (thousand.play.game.Game).
// The rules themselves come from the server with every game (``engine`` in a game's state:
// the ruleset's parameters and its scoring groups, built by thousand.web.offline), so no
// rule is written twice; what is written twice is the arithmetic that applies them, and
// tests/test_web_browser.py holds it to the Python engine entry by entry on random games
// of every preset, in the browser. No solving and no advice here: those stay the server's.
"use strict";

const ThousandRules = (() => {
  class Refused extends Error {
    // a refused entry: ``key`` names the reason (a page word) and ``params`` fill it in
    constructor(key, params) {
      super(key);
      this.key = key;
      this.params = params || {};
    }
  }

  const FIELDS = ["score", "opened", "bolts", "pit_tries", "pit_entry", "barrel_tries", "barrel_entry", "falls", "overshoots"];
  const WIN = "win";

  function player(score, fields) {
    return Object.freeze({ score, opened: true, bolts: 0, pit_tries: 0, pit_entry: 0, barrel_tries: 0, barrel_entry: 0, falls: 0, overshoots: 0, ...fields });
  }

  function replace(x, fields) { return Object.freeze({ ...x, ...fields }); }

  function same(x, y) {
    if (x === WIN || y === WIN) return x === y;
    return FIELDS.every((f) => x[f] === y[f]);
  }

  const byNumber = (a, b) => a - b;

  // lexicographic order of two arrays of numbers (Python's tuple order)
  function lexCompare(a, b) {
    for (let k = 0; k < Math.min(a.length, b.length); k++) if (a[k] !== b[k]) return a[k] - b[k];
    return a.length - b.length;
  }

  // ---------------------------------------------------------------- one roll (RollScorer)

  class Scorer {
    constructor(spec) {
      this.spec = spec;
      this.groups = spec.groups.map(([counts, points]) => [counts, points]);
      this.instant = spec.instant;
      this.bestMemo = new Map();
      this.fullMemo = new Map();
      this.asideMemo = new Map();
    }

    counts(roll) {
      const c = new Array(this.spec.faces).fill(0);
      for (const x of roll) c[x - 1] += 1;
      return c;
    }

    // [points, dice used, used count vector] of the best composition of ``c``: most points,
    // then most dice
    best(c) {
      const key = c.join(",");
      let r = this.bestMemo.get(key);
      if (r) return r;
      r = [0, 0, c.map(() => 0)];
      for (const [g, pts] of this.groups) {
        if (!c.every((a, k) => a >= g[k])) continue;
        const [p, u, used] = this.best(c.map((a, k) => a - g[k]));
        const cand = [p + pts, u + g.reduce((s, v) => s + v, 0), used.map((a, k) => a + g[k])];
        if (cand[0] > r[0] || (cand[0] === r[0] && cand[1] > r[1])) r = cand;
      }
      this.bestMemo.set(key, r);
      return r;
    }

    // the most points of a composition of ``c`` that uses every die (null: none does)
    full(c) {
      if (!c.some((v) => v)) return 0;
      const key = c.join(",");
      if (this.fullMemo.has(key)) return this.fullMemo.get(key);
      let best = null;
      for (const [g, pts] of this.groups) {
        if (!c.every((a, k) => a >= g[k])) continue;
        const r = this.full(c.map((a, k) => a - g[k]));
        if (r !== null && (best === null || r + pts > best)) best = r + pts;
      }
      this.fullMemo.set(key, best);
      return best;
    }

    isInstantWin(roll) {
      const c = this.counts(roll);
      return this.instant.some((pat) => c.every((a, k) => a >= pat[k]));
    }

    // the legal set-asides of a sorted roll: [points, dice], most points first
    setAsides(roll) {
      const key = roll.join(",");
      let out = this.asideMemo.get(key);
      if (out) return out;
      const sp = this.spec, c = this.counts(roll);
      out = [];
      if (sp.nothing && roll.length === sp.dice && !this.best(c)[1]) {
        out = [[sp.nothing, [...roll].sort(byNumber)]];
      } else if (sp.keep === "all") {
        const [p, u, used] = this.best(c);
        if (u) out = [[p, facesOf(used)]];
      } else {
        for (const sub of subMultisets(c)) {
          const n = sub.reduce((s, v) => s + v, 0);
          if (!n) continue;
          if (sp.compose === "any") {
            const p = this.full(sub);
            if (p !== null) out.push([p, facesOf(sub)]);
            continue;
          }
          const [p, u] = this.best(sub);
          if (u === n) out.push([p, facesOf(sub)]);
        }
        out.sort((a, b) => (b[0] - a[0]) || (a[1].length - b[1].length) || lexCompare(a[1], b[1]));
      }
      this.asideMemo.set(key, out);
      return out;
    }
  }

  function facesOf(c) {
    const out = [];
    c.forEach((k, f) => { for (let i = 0; i < k; i++) out.push(f + 1); });
    return out;
  }

  function* subMultisets(c) {
    if (!c.length) { yield []; return; }
    for (const rest of subMultisets(c.slice(1))) for (let k = 0; k <= c[0]; k++) yield [k, ...rest];
  }

  // ---------------------------------------------------------------- a player (Moves)

  class Moves {
    constructor(spec) { this.rs = spec; }

    pitOf(s) { return this.rs.pits.find((p) => p.low <= s && s < p.exit) || null; }

    onBarrel(s) {
      const b = this.rs.barrel;
      if (b.kind === "points") return s === b.threshold;
      if (b.kind === "region" || b.kind === "exact") return b.threshold > 0 && b.threshold <= s && s < this.rs.goal;
      return false;
    }

    isDump(s) { return this.rs.dump.includes(s); }

    initial() { return player(0, { opened: this.rs.open_min === 0 }); }

    // clear the counters that do not matter at x.score; start the pit and barrel bookkeeping
    // when the score has just moved into them from ``before``
    normalise(x, before = null) {
      const rs = this.rs, s = x.score;
      const opened = x.opened || s > 0 || rs.open_min === 0;
      const pit = this.pitOf(s);
      let pitTries = 0, pitEntry = 0;
      if (pit && rs.pit_attempts) {
        if (before !== null && this.pitOf(before) !== pit) pitEntry = before;
        else { pitTries = x.pit_tries; pitEntry = x.pit_entry; }
        pitEntry = Math.min(pitEntry, pit.low - rs.unit);
      }
      let bTries = 0, bEntry = 0;
      if (rs.barrel.kind === "points" && s === rs.barrel.threshold) {
        if (before !== null && before !== s) bEntry = rs.barrel.fall_to === "entry" ? before : 0;
        else {
          bTries = rs.barrel.attempts ? x.barrel_tries : 0;
          bEntry = rs.barrel.fall_to === "entry" ? x.barrel_entry : 0;
        }
      }
      return player(s, {
        opened,
        bolts: rs.bolts.limit ? x.bolts : 0,
        pit_tries: pitTries,
        pit_entry: pitEntry,
        barrel_tries: bTries,
        barrel_entry: bEntry,
        falls: rs.barrel.max_falls ? x.falls : 0,
        overshoots: rs.barrel.kind === "exact" ? x.overshoots : 0,
      });
    }

    exempt(x) {
      const ex = this.rs.bolts.exempt;
      return (ex.includes("unopened") && !x.opened) || (ex.includes("pit") && this.pitOf(x.score) !== null)
        || (ex.includes("barrel") && this.onBarrel(x.score));
    }

    canBank(x, t) {
      const rs = this.rs, b = rs.barrel;
      if (t <= 0 || t < rs.min_bank) return false;
      if (!x.opened && t < rs.open_min) return false;
      const pit = this.pitOf(x.score);
      if (pit && x.score + t < pit.exit) return false;
      if ((b.kind === "points" || b.kind === "region") && this.onBarrel(x.score) && x.score + t < rs.goal) return false;
      if (b.kind === "exact" && x.score + t > rs.goal) return false;
      if (b.kind === "exact" && this.onBarrel(x.score) && x.score + t !== rs.goal) return false;
      return true;
    }

    wins(x, t) {
      const rs = this.rs, s1 = x.score + t, k = rs.barrel.kind;
      if (k === "exact") return s1 === rs.goal;
      if (k === "points") return this.onBarrel(x.score) && s1 >= rs.goal;
      return s1 >= rs.goal;
    }

    midTurn(x, t) {
      const rs = this.rs;
      if (rs.barrel.kind === "exact" && x.score + t > rs.goal) return "overshoot";
      if (rs.dump_mid_turn && this.isDump(x.score + t) && t > 0) return "dump";
      return null;
    }

    setScore(x, s) {
      s = Math.max(s, this.rs.floor);
      if (this.isDump(s)) s = 0;
      return this.normalise(replace(x, { score: s }), x.score);
    }

    fall(x) {
      const b = this.rs.barrel, falls = x.falls + 1;
      if (b.max_falls && falls >= b.max_falls) {
        return this.setScore(replace(x, { falls: 0, barrel_tries: 0, barrel_entry: 0, overshoots: 0 }), 0);
      }
      let s;
      if (b.fall_to === "entry") s = x.barrel_entry;
      else if (b.fall_to === "open_min") s = this.rs.open_min;
      else s = x.score - b.fall_penalty;
      return this.setScore(replace(x, { falls: b.max_falls ? falls : 0, barrel_tries: 0, barrel_entry: 0, overshoots: 0 }), s);
    }

    bank(x, t) {
      const rs = this.rs;
      if (this.wins(x, t)) return WIN;
      let s1 = x.score + t;
      if (rs.barrel.kind === "points" && s1 >= rs.barrel.threshold) s1 = rs.barrel.threshold;
      const y = replace(x, { opened: true, bolts: rs.bolts.consecutive ? 0 : x.bolts });
      return this.normalise(replace(y, { score: this.isDump(s1) ? 0 : s1 }), x.score);
    }

    zero(x, overshoot = false) {
      const rs = this.rs;
      let y = x;
      if (overshoot) {
        const n = x.overshoots + 1;
        y = n >= rs.barrel.overshoots ? this.fall(replace(y, { overshoots: 0 })) : replace(y, { overshoots: n });
      }
      let boltDue = false;
      if (!overshoot && rs.bolts.limit && !this.exempt(x)) {
        const n = x.bolts + 1;
        boltDue = n >= rs.bolts.limit;
        y = replace(y, { bolts: boltDue ? 0 : n });
      }
      if (rs.pit_attempts && this.pitOf(x.score) !== null && y.score === x.score) {
        const n = x.pit_tries + 1;
        if (n >= rs.pit_attempts) {
          const low = this.pitOf(x.score).low;
          y = this.setScore(replace(y, { pit_tries: 0, pit_entry: 0 }), Math.min(x.pit_entry, low - rs.unit));
        } else y = replace(y, { pit_tries: n });
      }
      if (rs.barrel.kind === "points" && rs.barrel.attempts && this.onBarrel(x.score) && y.score === x.score) {
        const n = x.barrel_tries + 1;
        y = n >= rs.barrel.attempts ? this.fall(y) : replace(y, { barrel_tries: n });
      }
      if (boltDue) y = this.setScore(y, y.score - rs.bolts.penalty);
      return this.normalise(y);
    }

    midTurnEnd(x, t, event) { return event === "dump" ? this.bank(x, t) : this.zero(x, true); }

    raisedTo(x, t) {
      const rs = this.rs;
      let s1 = x.score + t;
      if (rs.barrel.kind === "points" && !this.onBarrel(x.score)) s1 = Math.min(s1, rs.barrel.threshold);
      return s1;
    }

    climbed(x, y) {
      return y !== WIN && this.rs.barrel.kind !== "none" && !this.onBarrel(x.score) && this.onBarrel(y.score);
    }

    pushOff(o, climbed) {
      const rs = this.rs;
      if (climbed && this.onBarrel(o.score)) {
        const p = rs.barrel.push_off;
        if (p === "fall") o = this.fall(o);
        else if (p === "penalty") o = this.setScore(o, o.score - rs.barrel.push_off_penalty);
        else if (p === "open_min") o = this.setScore(replace(o, { barrel_tries: 0, barrel_entry: 0 }), rs.open_min);
      }
      return o;
    }

    overtaken(o, before, after) {
      if (this.rs.overtake && before < o.score && o.score < after) o = this.setScore(o, o.score - this.rs.overtake);
      return o;
    }
  }

  // ---------------------------------------------------------------- a turn (TurnRules)

  // a turn in play: {player, total, dice, roll (sorted, or null before a roll)}; its end:
  // {end: "stop" | "forced" | "bust" | "win", total, event}
  class Turns {
    constructor(spec) {
      this.rs = spec;
      this.moves = new Moves(spec);
      this.scorer = new Scorer(spec);
    }

    start(x) { return { player: x, total: 0, dice: this.rs.dice, roll: null }; }

    compulsory(s) { return s.total > 0 && s.dice === this.rs.dice && this.rs.hot_dice !== "free"; }

    confirming(s) { return this.compulsory(s) && this.rs.hot_dice === "confirm"; }

    // why the player cannot stop before this roll, as a Refused (null: they can)
    stopRefusal(s) {
      const rs = this.rs, x = s.player, t = s.total, m = this.moves;
      if (s.roll !== null) return new Refused("set_aside_first", { roll: s.roll.join(",") });
      if (t <= 0) return new Refused("nothing_to_bank");
      if (this.compulsory(s)) return new Refused("hot_compulsory", { n: s.dice });
      if (m.canBank(x, t)) return null;
      if (!x.opened && t < rs.open_min) return new Refused("not_opened", { need: rs.open_min, t });
      if (t < rs.min_bank) return new Refused("min_bank", { need: rs.min_bank, t });
      const pit = m.pitOf(x.score);
      if (pit && x.score + t < pit.exit) return new Refused("in_pit", { low: pit.low, exit: pit.exit, s: x.score, t, sum: x.score + t });
      if (rs.barrel.kind === "exact" && x.score + t > rs.goal) return new Refused("over_exact", { goal: rs.goal });
      return new Refused("on_barrel", { goal: rs.goal, s: x.score, t, sum: x.score + t });
    }

    canStop(s) { return s.roll === null && s.total > 0 && !this.compulsory(s) && this.moves.canBank(s.player, s.total); }

    stop(s) {
      const why = this.stopRefusal(s);
      if (why) throw why;
      return { end: "stop", total: s.total, event: null };
    }

    setAsides(roll) { return this.scorer.setAsides(roll); }

    afterRoll(s, roll) {
      roll = [...roll].sort(byNumber);
      if (s.roll !== null) throw new Refused("set_aside_first", { roll: s.roll.join(",") });
      if (roll.length !== s.dice) throw new Refused("wrong_dice", { dice: s.dice, n: roll.length });
      if (this.scorer.isInstantWin(roll)) return { end: "win", total: 0, event: null };
      if (!this.setAsides(roll).length) return { end: "bust", total: 0, event: null };
      return { ...s, roll };
    }

    keep(s, kept) {
      if (s.roll === null) throw new Refused("no_roll");
      kept = [...kept].sort(byNumber);
      const hit = this.setAsides(s.roll).find(([, d]) => lexCompare(d, kept) === 0);
      if (!hit) {
        const legal = this.setAsides(s.roll).map(([, d]) => d.join(",")).join("; ");
        throw new Refused("illegal_keep", { kept: kept.join(","), roll: s.roll.join(","), legal });
      }
      const x = s.player, t1 = s.total + hit[0];
      const ev = this.moves.midTurn(x, t1);
      if (ev) return { end: "forced", total: t1, event: ev };
      if (this.confirming(s) && this.moves.canBank(x, t1)) return { end: "stop", total: t1, event: null };
      const left = s.dice - kept.length;
      return { player: x, total: t1, dice: left || this.rs.dice, roll: null };
    }
  }

  // what a finished turn does to every player (finish_turn): {players, won, final, instant, affected}
  function finishTurn(moves, players, mover, end, finished) {
    const x = players[mover], out = [...players];
    if (end.end === "win") {
      out[mover] = WIN;
      return { players: out, won: true, final: 0, instant: true, affected: [] };
    }
    if (end.end === "bust" || end.event === "overshoot") {
      out[mover] = moves.zero(x, end.event === "overshoot");
      return { players: out, won: false, final: 0, instant: false, affected: [] };
    }
    const t = end.total;
    const x2 = end.event ? moves.midTurnEnd(x, t, end.event) : moves.bank(x, t);
    if (x2 === WIN) {
      out[mover] = WIN;
      return { players: out, won: true, final: x.score + t, instant: false, affected: [] };
    }
    const before = x.score, after = moves.raisedTo(x, t), climbed = moves.climbed(x, x2);
    const affected = [];
    players.forEach((o, j) => {
      if (j === mover || finished.includes(j)) return;
      const pushed = moves.pushOff(o, climbed);
      const o2 = moves.overtaken(pushed, before, after);
      if (!same(o2, o)) {
        out[j] = o2;
        affected.push([j, [!same(pushed, o) && "pushed off", !same(o2, pushed) && "overtaken"].filter(Boolean)]);
      }
    });
    out[mover] = x2;
    return { players: out, won: false, final: 0, instant: false, affected };
  }

  // the seat after ``mover``, skipping finished seats; null when a round with someone
  // finished is complete (seat 0 starts every round)
  function nextInRound(n, mover, finished) {
    const done = Object.keys(finished).map(Number);
    let nxt = mover;
    for (;;) {
      nxt = (nxt + 1) % n;
      if (nxt === 0 && done.length) return null;
      if (!done.includes(nxt)) return nxt;
    }
  }

  function roundWinners(finished) {
    const top = Math.max(...Object.values(finished));
    return Object.keys(finished).map(Number).filter((j) => finished[j] === top).sort(byNumber);
  }

  // ---------------------------------------------------------------- the game (Game)

  // a game of the rules ``spec`` between ``names``, driven by log entries: "roll F,F,...",
  // "keep F,F,..." or "keep" (the best set-aside), "stop"
  class Game {
    constructor(spec, names) {
      this.spec = spec;
      this.names = names;
      this.turns = new Turns(spec);
      this.moves = this.turns.moves;
      this.reset();
    }

    reset() {
      const n = this.names.length;
      this.states = this.names.map(() => this.moves.initial());
      this.current = 0;
      this.round = 1;
      this.turnsPlayed = new Array(n).fill(0);
      this.history = this.names.map(() => []);  // per player: what each of their turns did
      this.finished = {};
      this.winners = null;
      this.log = [];
      this.events = [];
      this.turn = this.turns.start(this.states[0]);
    }

    get over() { return this.winners !== null; }

    // every legal set-aside of the roll showing: [points, dice]
    options() { return this.turn.roll ? this.turns.setAsides(this.turn.roll) : []; }

    // apply one entry and log it; a refused entry throws Refused and changes nothing
    submit(entry) {
      const e = normaliseEntry(entry, this.spec);
      const before = this.log.slice();
      try {
        this.events = [];
        this.apply(e);
      } catch (err) {
        this.replay(before);
        throw err;
      }
      this.log.push(e);
      return e;
    }

    replay(log) {
      this.reset();
      for (const e of log) {
        this.apply(e);
        this.log.push(e);
      }
      this.events = [];
    }

    apply(entry) {
      if (this.over) throw new Refused("game_is_over");
      const [verb, arg] = splitEntry(entry);
      if (verb === "roll") this.roll(arg.split(",").map(Number));
      else if (verb === "keep") this.keepChoice(arg ? arg.split(",").map(Number) : null);
      else this.stopTurn();
    }

    roll(faces) {
      const tr = this.turn;
      if (tr.roll !== null) throw new Refused("set_aside_first", { roll: tr.roll.join(",") });
      if (faces.length !== tr.dice) throw new Refused("wrong_dice", { dice: tr.dice, n: faces.length });
      const nxt = this.turns.afterRoll(tr, faces);
      if (nxt.end === "win") {
        this.history[this.current].push({ what: "instant", roll: [...faces].sort(byNumber) });
        this.finishGame([this.current]);
        return;
      }
      if (nxt.end) { this.finish(nxt); return; }
      this.turn = nxt;
      const opts = this.options();
      if (opts.length === 1) this.keep(opts[0][1]);
    }

    keepChoice(dice) {
      if (this.turn.roll === null) throw new Refused("no_roll");
      this.keep(dice === null ? this.options()[0][1] : dice);
    }

    keep(kept) {
      const nxt = this.turns.keep(this.turn, kept);
      if (nxt.end) { this.finish(nxt); return; }
      this.turn = nxt;
    }

    stopTurn() { this.finish(this.turns.stop(this.turn)); }

    finish(end) {
      const i = this.current, x = this.states[i], rs = this.spec;
      const res = finishTurn(this.moves, this.states, i, end, Object.keys(this.finished).map(Number));
      const y = res.players[i];
      if (end.end === "bust" || end.event === "overshoot") {
        this.history[i].push({ what: "zero", event: end.event || "bust", before: x.score, score: y.score });
        this.states[i] = y;
        this.endTurn();
        return;
      }
      const t = end.total;
      for (const [j, what] of res.affected) {
        this.history[j].push({ what: "hit", hits: what, by: i, before: this.states[j].score, score: res.players[j].score });
        this.states[j] = res.players[j];
      }
      if (res.won) {
        if (rs.equal_turns) {
          this.finished[i] = res.final;
          this.history[i].push({ what: "reached", t, score: res.final });
          this.endTurn();
          return;
        }
        this.states[i] = replace(this.states[i], { score: res.final });
        this.history[i].push({ what: "win", t, score: res.final });
        this.finishGame([i]);
        return;
      }
      this.history[i].push({ what: "bank", t, before: x.score, score: y.score });
      this.states[i] = y;
      this.endTurn();
    }

    endTurn() {
      this.turnsPlayed[this.current] += 1;
      const nxt = nextInRound(this.names.length, this.current, this.finished);
      if (nxt === null) {
        this.finishGame(roundWinners(this.finished));
        return;
      }
      if (nxt <= this.current) this.round += 1;
      this.current = nxt;
      this.turn = this.turns.start(this.states[nxt]);
    }

    finishGame(winners) { this.winners = winners; }

    score(j) { return j in this.finished ? this.finished[j] : this.states[j].score; }

    // the state as the differential test compares it with the Python engine's
    snapshot() {
      const tr = this.turn;
      return {
        players: this.states.map((x) => FIELDS.map((f) => (f === "opened" ? (x.opened ? 1 : 0) : x[f]))),
        finished: Object.keys(this.finished).map(Number).sort(byNumber).map((j) => [j, this.finished[j]]),
        current: this.current,
        round: this.round,
        winners: this.winners,
        turn: this.over ? null : {
          total: tr.total,
          dice: tr.dice,
          roll: tr.roll,
          options: this.options(),
          can_stop: this.turns.canStop(tr),
          compulsory: tr.roll === null && this.turns.compulsory(tr),
        },
      };
    }
  }

  function splitEntry(entry) {
    const k = entry.indexOf(" ");
    return k < 0 ? [entry, ""] : [entry.slice(0, k), entry.slice(k + 1).trim()];
  }

  // a log entry in its canonical form (normalise_entry), or Refused
  function normaliseEntry(entry, spec) {
    const [verb, arg] = splitEntry(String(entry).trim());
    if (verb === "stop" && !arg) return "stop";
    if (verb === "keep" && !arg) return "keep";
    if (verb === "roll" || verb === "keep") {
      let parts = arg.replace(/ /g, ",").split(",").filter(Boolean);
      if (parts.length === 1 && parts[0].length > 1 && /^\d+$/.test(parts[0]) && spec.faces < 10) parts = parts[0].split("");
      if (!parts.length || parts.length > spec.dice || !parts.every((p) => /^\d+$/.test(p))) throw new Refused("bad_faces", { roll: arg });
      const faces = parts.map(Number);
      if (faces.some((f) => f < 1 || f > spec.faces)) throw new Refused("bad_faces", { roll: arg });
      return `${verb} ${faces.sort(byNumber).join(",")}`;
    }
    throw new Refused("bad_entry", { entry });
  }

  // a game replayed from its log, with the snapshot after every entry (or the refusal's key)
  function replaySnapshots(spec, names, log) {
    const g = new Game(spec, names), out = [];
    for (const e of log) {
      try {
        g.submit(e);
        out.push(g.snapshot());
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        out.push({ refused: err.key });
      }
    }
    return out;
  }

  // a cheap digest of a log (32-bit FNV-1a of its entries joined by newlines), the same as
  // thousand.web.offline.log_digest: which server log an offline phone's entries follow
  function logDigest(log) {
    let h = 0x811c9dc5;
    const text = log.join("\n");
    for (let k = 0; k < text.length; k++) {
      h ^= text.charCodeAt(k) & 0xff;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h.toString(16).padStart(8, "0");
  }

  return { Refused, Game, Turns, Moves, Scorer, finishTurn, nextInRound, roundWinners, normaliseEntry, replaySnapshots, logDigest, WIN };
})();

if (typeof module !== "undefined") module.exports = ThousandRules;
