// thousand: the page of `thousand serve`. It shows the state the API returns and sends
// entries; every rule is the server's (the same engine as `thousand play`), except with the
// server away, when rules.js keeps the score on this phone until the server is back.
// The same page is the static app (`thousand web build`, <html data-static>): there the API
// is answered on the phone (localApi below): games in localStorage, the rules from the build's
// data/, the score kept by rules.js and the advice solved by advisor.js.
"use strict";

const $ = (sel) => document.querySelector(sel);
const STATIC = document.documentElement.dataset.static === "1";
const state = { lang: "en", words: {}, game: null, pending: [], presets: [], advicePoll: null, reviewPoll: null, reviewed: null, offline: false, offlinePoll: null, lastServer: null, local: null, follow: null, sent: 0 };

function t(key) { return state.words[key] || key; }

// a page word with its {name} (or {0}) places filled in
function fmt(key, params) { return t(key).replace(/\{(\w+)\}/g, (m, k) => (params && k in params ? params[k] : m)); }

// the secret of each game this phone may open (from the game's link, or made here)
function tokens() {
  try { return JSON.parse(localStorage.getItem("thousand.tokens") || "{}"); } catch (e) { return {}; }
}

function keepToken(id, token) {
  if (!id || !token) return;
  const all = tokens();
  if (all[id] === token) return;
  all[id] = token;
  localStorage.setItem("thousand.tokens", JSON.stringify(all));
}

function gameLink(id) {
  const base = (state.server && state.server.lan_url) || (location.origin + "/");
  return `${base}#game=${id}&t=${encodeURIComponent(tokens()[id] || "")}`;
}

function chooseLanguage() {
  const saved = localStorage.getItem("thousand.lang");
  if (saved === "ru" || saved === "en") return saved;
  return (navigator.language || "en").toLowerCase().startsWith("ru") ? "ru" : "en";
}

async function api(method, path, body) {
  if (STATIC) return localApi(method, path, body);
  const sep = path.includes("?") ? "&" : "?";
  const opts = { method, headers: {} };
  const game = path.match(/^\/api\/games\/([0-9a-f]{16})/);
  if (game && tokens()[game[1]]) opts.headers["X-Thousand-Token"] = tokens()[game[1]];
  // every change is JSON (the server refuses other changes: a cross-site form cannot send it)
  if (method !== "GET") {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body === undefined ? {} : body);
  }
  let res;
  const away = () => Object.assign(new Error(t("server_away")), { away: true });
  try {
    res = await fetch(path + sep + "lang=" + state.lang, opts);
  } catch (e) {  // the server cannot be reached (and this phone has no copy of the answer)
    setOffline(true);
    throw away();
  }
  setOffline(res.headers.get("X-Thousand-Offline") === "1");
  if (state.offline && method !== "GET") throw away();
  let data = null;
  try { data = await res.json(); } catch (e) { data = { error: res.status + " " + res.statusText }; }
  if (!res.ok) {
    const err = new Error((data && data.error) || String(res.status));
    err.status = res.status;
    throw err;
  }
  return { status: res.status, data };
}

// the server away: the page shows this phone's last copy of each answer (the service
// worker's), read-only, and looks for the server every few seconds
function setOffline(on) {
  if (on === state.offline) return;
  state.offline = on;
  document.body.classList.toggle("offline", on);
  markReadonly();
  const banner = $("#offline");
  banner.hidden = !on;
  banner.textContent = on ? t("offline") : "";
  clearInterval(state.offlinePoll);
  if (!on) return;
  state.offlinePoll = setInterval(async () => {
    try {
      const res = await fetch("/api/server?lang=" + state.lang);
      if (res.ok && res.headers.get("X-Thousand-Offline") !== "1") {
        setOffline(false);
        await route();
      }
    } catch (e) { /* still away */ }
  }, 3000);
}

function showError(message) {
  const box = $("#error");
  box.textContent = message || "";
  box.hidden = !message;
}

async function guarded(fn) {
  showError("");
  try { await fn(); } catch (e) { showError(e.message); }
}

async function loadWords() {
  const { data } = await api("GET", "/api/strings");
  state.words = data.words;
  if (state.offline) $("#offline").textContent = t("offline");  // marked before the words came
  document.documentElement.lang = state.lang;
  document.title = t("title");
  document.querySelectorAll("[data-w]").forEach((el) => { el.textContent = t(el.dataset.w); });
  $("#lang").textContent = state.lang === "ru" ? "EN" : "RU";
}

// ------------------------------------------------------------------ the start page

function nameRow(value) {
  const row = document.createElement("div");
  row.className = "name";
  const input = document.createElement("input");
  input.type = "text";
  input.maxLength = 40;
  input.value = value || "";
  input.placeholder = t("name_placeholder");
  const rm = document.createElement("button");
  rm.type = "button";
  rm.textContent = "×";
  rm.title = t("remove_player");
  rm.onclick = () => { if ($("#names").children.length > 2) row.remove(); updateNameButtons(); };
  row.append(input, rm);
  return row;
}

function updateNameButtons() {
  $("#add-player").disabled = $("#names").children.length >= 6;
}

async function showStart() {
  stopAdvicePoll();
  clearInterval(state.follow);
  state.game = null;
  $("#game").hidden = true;
  $("#start").hidden = false;
  $("#title").textContent = "";
  const [{ data: presets }, { data: games }] = await Promise.all([api("GET", "/api/presets"), api("GET", "/api/games")]);
  state.presets = presets;
  const sel = $("#rules");
  const chosen = sel.value || "classic";
  sel.innerHTML = "";
  for (const p of presets) {
    const o = document.createElement("option");
    o.value = p.name;
    o.textContent = p.name;
    sel.append(o);
  }
  sel.value = presets.some((p) => p.name === chosen) ? chosen : presets[0].name;
  showSummary();
  if (!$("#names").children.length) {
    for (const n of ["", "", ""]) $("#names").append(nameRow(n));
  }
  updateNameButtons();
  // the static app says when it is kept on the phone (its service worker in control)
  const ready = STATIC && !!(navigator.serviceWorker && navigator.serviceWorker.controller);
  $("#static-ready").hidden = !ready;
  $("#static-ready").textContent = ready ? t("static_ready") : "";
  const list = $("#saved");
  list.innerHTML = "";
  if (!games.length) {
    const li = document.createElement("li");
    li.textContent = t("no_games");
    list.append(li);
  }
  for (const g of games) {
    keepToken(g.id, g.token);
    const li = document.createElement("li");
    const label = document.createElement("span");
    label.textContent = `${g.rules}: ${g.players.join(", ")} (${g.entries}) — ${g.changed}`;
    const open = document.createElement("button");
    open.textContent = t("open");
    open.onclick = () => { location.hash = "#game=" + g.id; };
    const del = document.createElement("button");
    del.textContent = t("delete");
    del.onclick = () => guarded(async () => { await api("DELETE", "/api/games/" + g.id); await showStart(); });
    li.append(label, open, del);
    list.append(li);
  }
}

function showSummary() {
  const p = state.presets.find((x) => x.name === $("#rules").value);
  $("#rules-summary").textContent = p ? p.summary : "";
}

async function startGame(ev) {
  ev.preventDefault();
  const players = [...$("#names").querySelectorAll("input")].map((i, k) => i.value.trim() || `${t("player")} ${k + 1}`);
  const overrides = $("#overrides").value.split("\n").map((s) => s.trim()).filter(Boolean);
  const { data } = await api("POST", "/api/games", { rules: $("#rules").value, overrides, players });
  keepToken(data.id, data.token);
  location.hash = "#game=" + data.id;
}

async function resumeFile(ev) {
  const file = ev.target.files[0];
  if (!file) return;
  let body;
  try { body = JSON.parse(await file.text()); } catch (e) { throw new Error(file.name + ": not JSON"); }
  const { data } = await api("POST", "/api/games/import", body);
  keepToken(data.id, data.token);
  ev.target.value = "";
  location.hash = "#game=" + data.id;
}

// ------------------------------------------------------------------ a game

async function showGame(id) {
  $("#start").hidden = true;
  $("#game").hidden = false;
  state.local = null;  // the static app's answer below sets it again: its games are this phone's
  let { data } = await api("GET", "/api/games/" + id);
  keepToken(data.id, data.token);
  state.pending = [];
  if (!state.offline) data = await sendKept(data);
  render(data);
  // the server away: this phone goes on keeping the score from its last copy of the game
  if (state.offline && goLocal()) render(localState());
  follow(id);
  // the link (and its QR code) that opens this game on the other phones
  const link = gameLink(id);
  $("#share-link").textContent = link;
  $("#share-link").href = link;
  if (!STATIC) $("#share-qr").src = "/api/qr?text=" + encodeURIComponent(link);
  // --https: the table's own certificate authority, which each phone installs once
  const ca = state.server && state.server.authority;
  $("#authority").hidden = !ca;
  if (ca) {
    $("#authority-link").href = ca.url;
    $("#authority-link").textContent = fmt("authority_hint", [ca.fingerprint]);
  }
}

// the other phones' entries: every 2 s the page asks for the game's state and shows it when
// its log has changed (not while faces are being tapped, nor with the server away)
function follow(id) {
  clearInterval(state.follow);
  state.follow = setInterval(async () => {
    const g = state.game;
    if (!g || g.id !== id || g.local || state.offline || state.pending.length || document.hidden) return;
    const sent = state.sent;
    try {
      const { data } = await api("GET", "/api/games/" + id);
      const now = state.game;
      // an entry of this phone's own went out meanwhile: its answer is newer than this one
      if (state.sent !== sent || !now || now.id !== id || now.local) return;
      if (data.log.join("\n") === now.log.join("\n")) return;
      hideAdvice();
      render(data);
    } catch (e) { /* the offline banner says it; the next tick asks again */ }
  }, 2000);
}

function die(face) {
  const d = document.createElement("span");
  d.className = "die";
  d.textContent = face;
  return d;
}

// the turn's buttons are off only with the server away and no rules on this phone to keep score
function markReadonly() {
  const g = state.lastServer;
  document.body.classList.toggle("readonly", state.offline && !(g && g.engine && typeof ThousandRules !== "undefined"));
}

function render(g) {
  state.game = g;
  if (!g.local) state.lastServer = g;
  markReadonly();
  if (state.local) $("#offline").textContent = fmt("offline_scoring", [waiting(state.local.base, g.log)]);
  $("#title").textContent = `${g.ruleset} · ${g.round}`;
  const body = $("#sheet tbody");
  body.innerHTML = "";
  for (const p of g.players) {
    const tr = document.createElement("tr");
    if (p.to_move) tr.className = "to-move";
    if (p.winner) tr.className = "winner";
    const mark = document.createElement("td");
    mark.textContent = p.winner ? "★" : (p.to_move ? "▶" : "");
    const name = document.createElement("td");
    name.textContent = p.name;
    const score = document.createElement("td");
    score.className = "score";
    score.textContent = p.score;
    const status = document.createElement("td");
    status.textContent = p.status;
    if (p.last.length) {
      const last = document.createElement("span");
      last.className = "last";
      last.textContent = p.last.join("; ");
      status.append(last);
    }
    tr.append(mark, name, score, status);
    body.append(tr);
  }
  $("#where").textContent = g.where;
  const turn = g.turn;
  $("#turn").hidden = !turn;
  $("#undo").disabled = !g.log.length;
  if (turn) {
    $("#turn-total").textContent = `${t("turn_total")}: ${turn.total}`;
    $("#turn-dice").textContent = `${t("dice_to_roll")}: ${turn.dice}`;
    $("#entry").hidden = !!turn.roll;
    $("#keep").hidden = !turn.roll;
    const opts = $("#options");
    opts.innerHTML = "";
    for (const o of turn.options || []) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = o.label;
      b.dataset.keep = o.keep.join(",");
      b.onclick = () => send("keep " + o.keep.join(","));
      opts.append(b);
    }
    $("#stop").disabled = !turn.can_stop;
    $("#stop-why").textContent = turn.stop_refusal || "";
    renderFaces(g.faces, turn.dice);
  }
  $("#save").href = `/api/games/${g.id}/save?token=${encodeURIComponent(tokens()[g.id] || "")}`;
  const msgs = $("#messages");
  for (const m of [...g.messages].reverse()) {
    const li = document.createElement("li");
    li.textContent = m;
    msgs.prepend(li);
  }
  while (msgs.children.length > 30) msgs.lastChild.remove();
  // the review shows itself when the game ends, and goes when an undo reopens it
  if (g.over && !g.local && state.reviewed !== g.log.length) guarded(review);
  if (!g.over && state.reviewed !== null && state.reviewed !== undefined && state.reviewed !== g.log.length) hideReview();
}

function renderFaces(faces, dice) {
  const box = $("#faces");
  if (box.children.length !== faces) {
    box.innerHTML = "";
    for (let f = 1; f <= faces; f++) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = f;
      b.dataset.face = f;
      b.onclick = () => { if (state.pending.length < state.game.turn.dice) { state.pending.push(f); renderThrown(); } };
      box.append(b);
    }
  }
  renderThrown();
}

function renderThrown() {
  const box = $("#thrown");
  box.innerHTML = "";
  state.pending.forEach((f, k) => {
    const d = die(f);
    d.onclick = () => { state.pending.splice(k, 1); renderThrown(); };
    box.append(d);
  });
  const dice = state.game && state.game.turn ? state.game.turn.dice : 0;
  $("#roll").disabled = state.pending.length !== dice;
  $("#clear").disabled = !state.pending.length;
}

async function send(entry) {
  await guarded(async () => {
    hideAdvice();
    if (state.local) { localEntry(entry); return; }
    state.sent += 1;
    try {
      const { data } = await api("POST", `/api/games/${state.game.id}/entry`, { entry });
      state.pending = [];
      render(data);
    } catch (e) {
      if (!e.away || !goLocal()) throw e;
      localEntry(entry);  // the server went away: this phone keeps the score
    }
  });
}

async function undo() {
  await guarded(async () => {
    hideAdvice();
    if (state.local) { localUndo(); return; }
    state.sent += 1;
    try {
      const { data } = await api("POST", `/api/games/${state.game.id}/undo`);
      state.pending = [];
      render(data);
    } catch (e) {
      if (!e.away || !goLocal()) throw e;
      localUndo();
    }
  });
}

// ------------------------------------------------------------------ with the server away
// rules.js keeps the score from the game's last state on this phone (the service worker's
// copy). The phone's log waits in localStorage with the server log it follows ("base"), and
// goes to the server whole when it is back (POST .../sync), taken only if the server's game
// is still at that base; otherwise the entries are named and dropped, never merged.

function keptKey(id) { return "thousand.offline." + id; }

function kept(id) {
  try { return JSON.parse(localStorage.getItem(keptKey(id)) || "null"); } catch (e) { return null; }
}

// how far ``log`` is from ``base``: entries taken back and entries made after their common start
function common(base, log) {
  let k = 0;
  while (k < base.length && k < log.length && base[k] === log[k]) k++;
  return k;
}

function waiting(base, log) { const k = common(base, log); return base.length - k + log.length - k; }

// into local scoring, from the last state the server gave (false: not possible here)
function goLocal() {
  const g = state.lastServer;
  if (state.local) return true;
  if (!g || !g.engine || typeof ThousandRules === "undefined") return false;
  const q = kept(g.id);
  const game = new ThousandRules.Game(g.engine, g.players.map((p) => p.name));
  const base = q ? q.base : g.log.slice();
  try { game.replay(q ? q.log : g.log); } catch (e) { return false; }
  state.local = { id: g.id, server: g, game, base };
  return true;
}

function keepLocal() {
  const { id, game, base } = state.local;
  if (STATIC) { saveGame({ ...state.local.record, log: game.log, changed: new Date().toISOString() }); return; }
  if (!waiting(base, game.log)) localStorage.removeItem(keptKey(id));
  else localStorage.setItem(keptKey(id), JSON.stringify({ base, log: game.log }));
}

function refusal(err) {
  if (err instanceof ThousandRules.Refused) return new Error(fmt(err.key, err.params));
  return err;
}

function localEntry(entry) {
  const game = state.local.game;
  if (entry === "roll" && !game.over) {  // "roll for me": this phone throws the dice
    const faces = Array.from({ length: game.turn.dice }, () => 1 + Math.floor(Math.random() * game.spec.faces));
    entry = "roll " + faces.join(",");
  }
  let done;
  const before = game.log.slice();
  try { done = game.submit(entry); } catch (e) { throw refusal(e); }
  try { keepLocal(); } catch (e) { game.replay(before); throw e; }  // not kept: not taken
  state.pending = [];
  render(localState([STATIC ? done : fmt("offline_entry", [done])]));
}

function localUndo() {
  const game = state.local.game;
  if (!game.log.length) throw new Error(t("nothing_to_undo"));
  const before = game.log.slice();
  game.replay(game.log.slice(0, -1));
  try { keepLocal(); } catch (e) { game.replay(before); throw e; }
  state.pending = [];
  render(localState());
}

// the state of the local game, in the shape the server gives (render draws both)
function localState(messages) {
  const { server, game: g } = state.local;
  const players = g.names.map((name, j) => ({
    name,
    score: g.score(j),
    status: localStatus(g, j),
    last: g.history[j].slice(-4).map((h) => historyText(g, h)),
    to_move: j === g.current && !g.over,
    winner: !!(g.winners && g.winners.includes(j)),
  }));
  let turn = null;
  if (!g.over) {
    const tr = g.turn;
    const why = tr.roll === null ? g.turns.stopRefusal(tr) : null;
    turn = {
      player: g.names[g.current],
      total: tr.total,
      dice: tr.dice,
      roll: tr.roll,
      options: g.options().map(([points, dice]) => ({ keep: dice, points, label: fmt("keep_label", { dice: dice.join(","), points }) })),
      can_stop: tr.roll === null && !why,
      stop_refusal: why ? fmt(why.key, why.params) : null,
      compulsory: tr.roll === null && g.turns.compulsory(tr),
    };
  }
  return { ...server, round: g.round, over: g.over, where: localWhere(g), players, turn, messages: messages || [], log: g.log.slice(), local: true };
}

// a player's status on the sheet (Game.status)
function localStatus(g, j) {
  const sp = g.spec, x = g.states[j], m = g.moves, b = sp.barrel, out = [];
  if (j in g.finished) return fmt("st_finished", { total: g.finished[j] });
  if (!x.opened) out.push(fmt("st_unopened", { n: sp.open_min }));
  const pit = m.pitOf(x.score);
  if (pit) out.push(fmt("st_pit", pit) + (sp.pit_attempts ? fmt("st_tries", { n: x.pit_tries, limit: sp.pit_attempts }) : ""));
  if (m.onBarrel(x.score)) out.push(t("st_barrel") + (b.kind === "points" && b.attempts ? fmt("st_tries", { n: x.barrel_tries, limit: b.attempts }) : ""));
  if (sp.bolts.limit && x.bolts) out.push(fmt("st_bolts", { n: x.bolts, limit: sp.bolts.limit }));
  if (b.max_falls && x.falls) out.push(fmt("st_falls", { n: x.falls, limit: b.max_falls }));
  if (b.kind === "exact" && x.overshoots) out.push(fmt("st_overshoots", { n: x.overshoots, limit: b.overshoots }));
  return out.join(", ") || "-";
}

// what a turn did, for the sheet's "last" column
function historyText(g, h) {
  if (h.what === "zero") return t("h_" + h.event) + (h.score !== h.before ? ` → ${h.score}` : "");
  if (h.what === "bank") return `+${h.t} → ${h.score}`;
  if (h.what === "win") return fmt("h_win", { t: h.t, total: h.score });
  if (h.what === "reached") return fmt("h_reached", { t: h.t, total: h.score, goal: g.spec.goal });
  if (h.what === "instant") return fmt("h_instant", { roll: h.roll.join(",") });
  const what = h.hits.map((w) => (w === "pushed off" ? t("h_pushed") : fmt("h_overtaken", { n: g.spec.overtake })));
  return fmt("h_hit", { what: what.join(t("h_and")), name: g.names[h.by], a: h.before, b: h.score });
}

function localWhere(g) {
  if (g.over) return t("where_over");
  const tr = g.turn, name = g.names[g.current];
  if (tr.roll) return fmt("where_keep", { name, roll: tr.roll.join(",") });
  if (tr.total === 0) return fmt("where_roll", { name });
  return fmt(g.turns.canStop(tr) ? "where_turn" : "where_must", { name, t: tr.total });
}

// the server is back: the entries this phone kept go to it (the whole log, with the base it
// follows); the server's state after them, or the server's own state and the entries named
async function sendKept(g) {
  const q = kept(g.id);
  if (!q || typeof ThousandRules === "undefined") return g;
  const n = waiting(q.base, q.log);
  try {
    const { data } = await api("POST", `/api/games/${g.id}/sync`, { since: ThousandRules.logDigest(q.base), log: q.log });
    localStorage.removeItem(keptKey(g.id));
    data.messages = [fmt("synced", [n])];
    return data;
  } catch (e) {
    if (e.away) throw e;  // gone again: the entries stay kept
    localStorage.removeItem(keptKey(g.id));
    const lost = q.log.slice(common(q.base, q.log)).join("; ") || t("undo");
    showError(e.status === 412 ? fmt("sync_conflict", [lost]) : `${e.message}: ${lost}`);
    return g;
  }
}

// ------------------------------------------------------------------ advice

function stopAdvicePoll() {
  if (state.advicePoll) { clearTimeout(state.advicePoll); state.advicePoll = null; }
}

function hideAdvice() {
  stopAdvicePoll();
  $("#advice").hidden = true;
  $("#advice").innerHTML = "";
}

async function advice() {
  stopAdvicePoll();
  const id = state.game.id;
  const box = $("#advice");
  box.hidden = false;
  const res = await api("GET", `/api/games/${id}/advice`);
  if (!state.game || state.game.id !== id) return;
  if (res.status === 202) {
    const p = res.data;
    box.innerHTML = "";
    const h = document.createElement("h3");
    h.textContent = `${t("solving")}: ${p.ruleset} ${p.objective}`;
    const bar = progressBar(p.fraction);
    const left = document.createElement("p");
    left.className = "muted";
    left.textContent = p.expected ? t("seconds_left").replace("{0}", Math.max(0, Math.round(p.expected - p.elapsed))) : "";
    box.append(h, bar, left);
    state.advicePoll = setTimeout(() => guarded(advice), 1000);
    return;
  }
  box.innerHTML = "";
  const builds = res.data.builds || [];
  // the advice itself first; a heading without options (why a method is missing) after it
  const parts = [...res.data.advice].sort((x, y) => (y.options ? 1 : 0) - (x.options ? 1 : 0));
  for (const part of parts) {
    if (!part.options) {
      // why a method is missing: a line in small print
      const why = document.createElement("p");
      why.className = "muted";
      why.textContent = part.method;
      box.append(why);
      continue;
    }
    // first what to do and what it is worth; how it was found one tap below
    const h = document.createElement("h3");
    h.textContent = part.headline;
    h.className = part.exact ? "" : "approx";
    const how = document.createElement("details");
    const sum = document.createElement("summary");
    sum.textContent = t("how_found");
    const said = document.createElement("p");
    said.textContent = part.method;
    how.append(sum, said);
    box.append(h, how);
    if (part.note) {
      // what the rules say of this turn (no stop yet, samosval ahead): in sight, not folded away
      const n = document.createElement("p");
      n.className = "muted";
      n.textContent = part.note;
      box.append(n);
    }
    const chance = part.value === "win_probability" || part.value === "estimated_win_probability";
    const higher = part.value !== "expected_turns";
    const vals = part.options.map((o) => o[part.value]);
    const best = higher ? Math.max(...vals) : Math.min(...vals);
    const worst = higher ? Math.min(...vals) : Math.max(...vals);
    part.options.forEach((o, k) => {
      const v = o[part.value];
      const row = document.createElement("div");
      row.className = "bar-row" + (k === 0 ? " best" : "");
      const label = document.createElement("div");
      label.className = "label";
      const a = document.createElement("span");
      a.textContent = o.label;
      const b = document.createElement("span");
      const shown = chance ? (100 * v).toFixed(1) + "%" : v.toFixed(part.value === "duel_product" ? 4 : 2);
      // the margin to the best option, in the options' own terms
      const gap = k === 0 ? "" : ` (${chance ? "−" + (100 * Math.abs(best - v)).toFixed(1) : "−" + Math.abs(best - v).toFixed(2)})`;
      b.textContent = `${part.value_label} ${shown}${gap}`;
      label.append(a, b);
      const bar = document.createElement("div");
      bar.className = "bar";
      const fill = document.createElement("i");
      // bars relative to the options: the best fills the bar, the worst a sliver, so that a
      // margin of a point shows (absolute chances of 26.9% and 25.8% would look the same)
      const span = Math.abs(best - worst);
      const share = span > 0 ? 1 - Math.abs(best - v) / span : 1;
      fill.style.width = `${Math.round(8 + 92 * share)}%`;
      bar.append(fill);
      row.append(label, bar);
      if (o.chances && part.others) {
        // every other player's chance after this option, one line below the mover's
        const them = document.createElement("div");
        them.className = "others muted";
        them.textContent = part.others.map((name, j) => `${name} ${(100 * o.chances[j + 1]).toFixed(1)}%`).join(", ");
        row.append(them);
      }
      box.append(row);
    });
  }
  for (const b of builds) box.append(buildBox(b));
  // while a table is built the advice stays as it is, and is asked again until the build ends
  if (builds.some((b) => b.job && b.job.status === "solving")) {
    state.advicePoll = setTimeout(() => guarded(advice), 2000);
  }
}

// a solve's share done as a bar
function progressBar(fraction) {
  const bar = document.createElement("div");
  bar.className = "progress";
  const fill = document.createElement("i");
  fill.style.width = `${Math.round(100 * (fraction || 0))}%`;
  bar.append(fill);
  return bar;
}

function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) return t("n_seconds").replace("{0}", s);
  if (s < 90 * 60) return t("n_minutes").replace("{0}", Math.round(s / 60));
  // a build of hours says so: "451 min" reads as a wait, "7.5 h" as a night's work
  return t("n_hours").replace("{0}", (Math.round(s / 360) / 10).toString());
}

// a table the exact advice needs: a button that builds it on the server, or the build's progress
function buildBox(b) {
  const div = document.createElement("div");
  div.className = "build";
  const what = b.objective === "duel" ? t("table_duel") : t("table_players").replace("{0}", b.objective.replace("players", ""));
  const job = b.job;
  if (!job) {
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "build-btn";
    btn.textContent = t("build_exact").replace("{0}", what).replace("{1}", duration(b.seconds[1]));
    if (b.seconds[1] >= 3600) {  // hours on the server: the player should know before tapping
      btn.textContent += " — " + t("build_hours");
      btn.classList.add("long");
    }
    btn.addEventListener("click", () => guarded(async () => {
      btn.disabled = true;
      await api("POST", `/api/games/${state.game.id}/build`, { objective: b.objective });
      await advice();
    }));
    div.append(btn);
    return div;
  }
  const h = document.createElement("p");
  if (job.status === "failed") {
    h.className = "error";
    h.textContent = `${t("build_failed")}: ${job.error}`;
    div.append(h);
    return div;
  }
  const pct = Math.round(100 * (job.fraction || 0));
  h.textContent = `${t("building").replace("{0}", what)}: ${pct}%`;
  const bar = progressBar(job.fraction);
  const left = document.createElement("p");
  left.className = "muted";
  const rest = job.expected - job.elapsed;
  left.textContent = rest > 0 ? t("time_left").replace("{0}", duration(rest)) : t("longer_than_estimated");
  div.append(h, bar, left);
  return div;
}

// ------------------------------------------------------------------ review

function stopReviewPoll() {
  if (state.reviewPoll) { clearTimeout(state.reviewPoll); state.reviewPoll = null; }
}

function hideReview() {
  stopReviewPoll();
  state.reviewed = null;
  $("#review").hidden = true;
  $("#review").innerHTML = "";
}

function pp(v) { return `${(100 * v).toFixed(2)} pp`; }

// every decision so far valued (thousand review): a line per player, then the worst decisions
async function review() {
  stopReviewPoll();
  const id = state.game.id;
  const box = $("#review");
  box.hidden = false;
  const res = await api("GET", `/api/games/${id}/review`);
  if (!state.game || state.game.id !== id) return;
  box.innerHTML = "";
  const h = document.createElement("h3");
  box.append(h);
  if (res.status === 202) {
    h.textContent = `${t("solving")}: ${res.data.ruleset} ${res.data.objective}`;
    state.reviewPoll = setTimeout(() => guarded(review), 1000);
    return;
  }
  const rv = res.data.review;
  state.reviewed = state.game.log.length;
  h.textContent = t("review_title");
  const how = document.createElement("p");
  how.className = "muted";
  how.textContent = rv.methods.join("; ");
  const table = document.createElement("table");
  const head = document.createElement("tr");
  for (const w of ["player", "decisions", "accuracy", "per_decision"]) {
    const th = document.createElement("th");
    th.textContent = t(w);
    head.append(th);
  }
  table.append(head);
  for (const p of rv.summary) {
    const tr = document.createElement("tr");
    // the average given up per decision: the game's sum of losses is no chance of winning
    const cells = [p.name, p.decisions, p.accuracy === null ? "–" : `${Math.round(100 * p.accuracy)}%`,
      pp(p.lost_per_decision)];
    cells.forEach((c, k) => {
      const td = document.createElement("td");
      td.textContent = c;
      if (k) td.className = "num";
      tr.append(td);
    });
    table.append(tr);
  }
  box.append(how, table);
  const bad = rv.decisions.filter((d) => d.lost > rv.accurate_within).sort((a, b) => b.lost - a.lost).slice(0, 6);
  const sub = document.createElement("h3");
  sub.textContent = t("worst");
  box.append(sub);
  if (!bad.length) {
    const p = document.createElement("p");
    p.className = "muted";
    p.textContent = t("no_mistakes");
    box.append(p);
    return;
  }
  const list = document.createElement("ol");
  for (const d of bad) {
    const li = document.createElement("li");
    const who = document.createElement("b");
    who.textContent = `${rv.players[d.player]}, #${d.entry + 1}: `;
    const what = document.createElement("span");
    what.textContent = `${d.chosen} ${t("instead_of")} ${d.best} `;
    const lost = document.createElement("span");
    lost.className = "lost";
    lost.textContent = `−${pp(d.lost)}`;
    const where = document.createElement("div");
    where.className = "muted";
    where.textContent = d.situation;
    li.append(who, what, lost, where);
    list.append(li);
  }
  box.append(list);
}

// ------------------------------------------------------------------ wiring

// ------------------------------------------------------------------ the static app's own API
// The answers the server would give, made on this phone: the build's data (data/), the games
// in localStorage (each saved before its entry is shown), rules.js and advisor.js.

const GAMES = "thousand.static.games";
const local = { rules: new Map(), advisors: new Map() };

async function dataFile(path, kind) {
  if (location.protocol === "file:") return scriptData(path, kind);
  const res = await fetch(path);
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return kind === "bytes" ? res.arrayBuffer() : res.json();
}

// the app opened from its folder (file://), where a page may load scripts but fetch nothing:
// each data file F has a twin F.js (the build's) that hands its content to ThousandData.put
const ThousandData = {
  loads: new Map(),  // path -> the promise of its content
  waiting: new Map(),  // path -> what its script's put resolves
  put(path, value) { const done = this.waiting.get(path); if (done) done(value); },
};

function scriptData(path, kind) {
  if (!ThousandData.loads.has(path)) {
    ThousandData.loads.set(path, new Promise((resolve, reject) => {
      ThousandData.waiting.set(path, resolve);
      const el = document.createElement("script");
      el.src = path + ".js";
      el.onload = () => el.remove();
      el.onerror = () => { ThousandData.loads.delete(path); reject(new Error(`${path}: not found`)); };
      document.head.append(el);
    }).finally(() => ThousandData.waiting.delete(path)));
  }
  return ThousandData.loads.get(path).then((v) => (kind === "bytes" ? Uint8Array.from(atob(v), (c) => c.charCodeAt(0)).buffer : v));
}

function gameIds() {
  try { return JSON.parse(localStorage.getItem(GAMES) || "[]"); } catch (e) { return []; }
}

function loadGame(id) {
  try { return JSON.parse(localStorage.getItem(GAMES + "." + id) || "null"); } catch (e) { return null; }
}

// localStorage writes at once or throws (full): a game is saved before its entry shows
function saveGame(rec) {
  localStorage.setItem(GAMES + "." + rec.id, JSON.stringify(rec));
  const ids = gameIds().filter((i) => i !== rec.id);
  localStorage.setItem(GAMES, JSON.stringify([rec.id, ...ids]));
}

// a ruleset's data and its advisor, each loaded once (a promise kept, so that the loads
// started at the page's start are the ones the game and the advice wait for)
function rulesData(name) {
  if (!local.rules.has(name)) {
    local.rules.set(name, dataFile(`data/rules/${encodeURIComponent(name)}.json`).catch((e) => {
      local.rules.delete(name);
      throw new Error(`${t("static_no_rules")}: ${name} (${e.message})`);
    }));
  }
  return local.rules.get(name);
}

function advisorFor(name) {
  if (!local.advisors.has(name)) {
    local.advisors.set(name, (async () => {
      const data = await rulesData(name);
      if (!data.table && !data.last_turn) return null;  // equal turns without a table: the last turn alone
      return new ThousandAdvisor.Advisor(data, data.table ? (k) => dataFile(`${data.table.blocks}${k}.bin`, "bytes") : null);
    })().catch((e) => { local.advisors.delete(name); throw e; }));
  }
  return local.advisors.get(name);
}

// the app opened on a game: its rules start loading at once, beside the page's own start (the
// advice then reads the few blocks of the table its decision needs)
function preload() {
  const m = location.hash.match(/^#game=([0-9a-f]{16})/);
  const rec = m && loadGame(m[1]);
  if (rec) advisorFor(rec.rules).catch(() => {});
}

async function openLocal(id) {
  const rec = loadGame(id);
  if (!rec) throw Object.assign(new Error(t("static_no_game")), { status: 404 });
  const data = await rulesData(rec.rules);
  const game = new ThousandRules.Game(data.engine, rec.names);
  game.replay(rec.log);
  const server = { id, rules: rec.rules, ruleset: rec.rules, faces: data.engine.faces, engine: data.engine, log: [], messages: [] };
  state.local = { id, server, game, base: rec.log.slice(), record: rec };
  return localState();
}

// a moment as the phone's clock reads it, to the minute (as the server lists its games)
function localTime(iso) {
  const d = new Date(iso), two = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

async function localApi(method, path, body) {
  const ok = (data, status) => ({ status: status || 200, data });
  if (path === "/api/strings") return ok(await dataFile(`data/strings.${state.lang}.json`));
  if (path === "/api/server") return ok({ static: true, lan_url: null, trusted: true });
  if (path === "/api/presets") return ok(await dataFile("data/presets.json"));
  if (path === "/api/games" && method === "GET") {
    return ok(gameIds().map(loadGame).filter(Boolean).map((g) => ({ id: g.id, rules: g.rules, players: g.names, entries: g.log.length, changed: localTime(g.changed) })));
  }
  if (path === "/api/games" && method === "POST") {
    if (body.overrides && body.overrides.length) throw new Error(t("static_no_overrides"));
    await rulesData(body.rules);
    const id = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
    saveGame({ id, rules: body.rules, names: body.players, log: [], changed: new Date().toISOString() });
    return ok({ id }, 201);
  }
  const m = path.match(/^\/api\/games\/([0-9a-f]{16})(?:\/(advice))?$/);
  if (m && method === "DELETE") {
    localStorage.removeItem(GAMES + "." + m[1]);
    localStorage.setItem(GAMES, JSON.stringify(gameIds().filter((i) => i !== m[1])));
    return ok({ deleted: m[1] });
  }
  if (m && !m[2]) return ok(await openLocal(m[1]));
  if (m && m[2] === "advice") {
    if (!state.local || state.local.id !== m[1]) await openLocal(m[1]);
    const { game, record } = state.local;
    if (game.over) throw new Error(t("where_over"));
    const adv = await advisorFor(record.rules);
    const part = adv ? await adv.advise(game, state.words, state.lang) : { method: (await rulesData(record.rules)).why[state.lang], options: null };
    return ok({ status: "ready", player: game.names[game.current], advice: [part], builds: [] });
  }
  throw Object.assign(new Error(`${method} ${path}`), { status: 404 });
}

async function route() {
  showError("");
  const m = location.hash.match(/^#game=([0-9a-f]{16})(?:&t=([A-Za-z0-9_%-]+))?$/);
  if (m && m[2]) keepToken(m[1], decodeURIComponent(m[2]));
  await guarded(async () => { if (m) await showGame(m[1]); else await showStart(); });
}

async function init() {
  document.body.classList.toggle("static", STATIC);
  state.lang = chooseLanguage();
  if (STATIC) preload();
  await guarded(loadWords);
  await guarded(async () => { state.server = (await api("GET", "/api/server")).data; });
  $("#lang").onclick = () => guarded(async () => {
    state.lang = state.lang === "ru" ? "en" : "ru";
    localStorage.setItem("thousand.lang", state.lang);
    await loadWords();
    hideAdvice();
    $("#messages").innerHTML = "";
    await route();
  });
  $("#rules").onchange = showSummary;
  $("#add-player").onclick = () => { if ($("#names").children.length < 6) $("#names").append(nameRow("")); updateNameButtons(); };
  $("#new-game").onsubmit = (ev) => guarded(() => startGame(ev));
  $("#resume-file").onchange = (ev) => guarded(() => resumeFile(ev));
  $("#roll").onclick = () => send("roll " + state.pending.join(","));
  $("#roll-for-me").onclick = () => send("roll");
  $("#clear").onclick = () => { state.pending = []; renderThrown(); };
  $("#stop").onclick = () => send("stop");
  $("#undo").onclick = undo;
  $("#advice-btn").onclick = () => guarded(advice);
  $("#review-btn").onclick = () => guarded(review);
  $("#home").onclick = (ev) => { ev.preventDefault(); location.hash = ""; route(); };
  window.addEventListener("hashchange", () => { $("#messages").innerHTML = ""; hideAdvice(); hideReview(); route(); });
  await route();
}

// installable: the service worker keeps the page and the last state of each game on the phone
// (the static app: every file of its folder, wherever the folder is served from)
if ("serviceWorker" in navigator) navigator.serviceWorker.register(STATIC ? "sw.js" : "/sw.js").catch(() => {});
init();
