// thousand: the service worker of the page. Served by `thousand serve`, it keeps the page
// itself and the last answer of each game on this phone, so the page opens with the server
// away: the score sheet as it last was, and the page's own scorekeeper (rules.js) goes on
// from it; advice stays the server's. In the static app (`thousand web build`) it keeps every
// file of the app, so that the whole app, advice included, works with no network.
"use strict";

const VERSION = "__VERSION__";  // the server (or the static build) writes its files' hash here
// the static app (thousand web build): every file of the folder, kept at the first visit and
// answered from this phone from then on; null for the server's page
const STATIC_FILES = null;
const SHELL = `thousand-shell-${VERSION}`;
const ANSWERS = "thousand-answers";
const PAGE = ["/", "/static/app.js", "/static/rules.js", "/static/advisor.js", "/static/app.css", "/manifest.webmanifest", "/static/icon-192.png", "/static/icon-512.png"];
// the answers worth keeping: what the page needs to draw a game (never advice, never a change)
const KEPT = /^\/api\/(strings|presets|server|games|games\/[0-9a-f]{16})$/;

// what the page asks before it draws anything, in both languages: asked here, since the
// page's own first asks came before this worker was there to keep them
const FIRST = ["strings", "server", "presets"].flatMap((a) => ["en", "ru"].map((l) => `/api/${a}?lang=${l}`));

// the static app: every file at install (the tables too, so that advice works offline from
// the first visit on); the folder may sit anywhere on its host, so paths are the worker's own
if (STATIC_FILES) {
  self.addEventListener("install", (event) => {
    event.waitUntil(caches.open(SHELL).then((c) => c.addAll(STATIC_FILES)).then(() => self.skipWaiting()));
  });
  self.addEventListener("fetch", (event) => {
    const req = event.request;
    if (req.method !== "GET" || new URL(req.url).origin !== self.location.origin) return;
    event.respondWith(caches.match(req, { ignoreSearch: true }).then((hit) => hit || fetch(req)));
  });
}

if (!STATIC_FILES) self.addEventListener("install", (event) => {
  event.waitUntil(
    Promise.all([caches.open(SHELL).then((c) => c.addAll(PAGE)), caches.open(ANSWERS).then((c) => c.addAll(FIRST))])
      .then(() => self.skipWaiting()),
  );
});

// a new version replaces the old copy of the page (both kinds)
self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("thousand-shell-") && k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// the server first (a new page or a new state as soon as it is there), this phone's copy when
// the server cannot be reached; a kept answer comes back marked X-Thousand-Offline
async function fromNetwork(request, store, mark) {
  try {
    const res = await fetch(request);
    if (res.ok) (await caches.open(store)).put(request, res.clone());
    return res;
  } catch (err) {
    const copy = await caches.match(request, { ignoreVary: true });
    if (!copy) throw err;
    if (!mark) return copy;
    const headers = new Headers(copy.headers);
    headers.set("X-Thousand-Offline", "1");
    return new Response(await copy.blob(), { status: copy.status, headers });
  }
}

// an entry's answer is the game's new state: kept as the game's own answer, so the copy on
// this phone is never older than what the page last showed
const CHANGE = /^\/api\/games\/([0-9a-f]{16})\/(entry|undo|sync)$/;

async function keepState(request, game, lang) {
  const res = await fetch(request);
  if (res.ok) {
    const key = new URL(`/api/games/${game}?lang=${lang}`, self.location.origin).href;
    (await caches.open(ANSWERS)).put(key, res.clone());
  }
  return res;
}

if (!STATIC_FILES) self.addEventListener("fetch", (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  const change = req.method === "POST" && url.pathname.match(CHANGE);
  if (change) event.respondWith(keepState(req, change[1], url.searchParams.get("lang") || "en"));
  if (req.method !== "GET") return;
  if (PAGE.includes(url.pathname)) event.respondWith(fromNetwork(req, SHELL, false));
  else if (KEPT.test(url.pathname)) event.respondWith(fromNetwork(req, ANSWERS, true));
});
