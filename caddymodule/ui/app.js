// The event inspector: plain JavaScript over the admin API it is served by.
"use strict";
// Every call carries X-Hookgate-Inspector: a page on another site cannot send
// it (the custom header needs a CORS preflight the inspector never grants), so
// the inspector knows a replay or cancel came from this page.
const api = (path, opts) => fetch("/hookgate/" + path, {
  ...opts,
  credentials: "same-origin",
  headers: { ...(opts && opts.headers), "X-Hookgate-Inspector": "1" },
}).then(async (r) => {
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
});
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
};
let cursor = null;
let selected = null;

function query() {
  const q = new URLSearchParams();
  for (const f of ["source", "upstream", "status", "origin", "since", "q"]) if ($(f).value) q.set(f, $(f).value);
  q.set("limit", "50");
  return q;
}

async function loadEvents(append) {
  const q = query();
  if (append && cursor) q.set("cursor", cursor);
  const data = await api("events?" + q);
  const tbody = $("events");
  if (!append) tbody.replaceChildren();
  for (const e of data.events) {
    const deliveries = e.deliveries.map((d) => `${d.upstream}: ${d.state} (${d.attempts})`).join(", ") || "—";
    const row = el("tr", { "data-id": e.id },
      el("td", {}, new Date(e.received_at).toLocaleString()),
      el("td", {}, e.source),
      el("td", {}, el("span", { class: "badge " + e.status }, e.status)),
      el("td", {}, deliveries),
      el("td", { class: "id" }, e.id));
    row.addEventListener("click", () => showEvent(e.id));
    if (e.id === selected) row.classList.add("selected");
    tbody.append(row);
  }
  cursor = data.next_cursor || null;
  $("more").hidden = !cursor;
}

// An event's own address, #/events/<id>: an alert or a colleague can link
// straight to it.
const eventLink = /^#\/events\/([0-9A-Za-z]+)$/;

async function showEvent(id) {
  selected = id;
  if (location.hash !== "#/events/" + id) history.replaceState(null, "", "#/events/" + id);
  for (const r of document.querySelectorAll("tbody tr")) r.classList.toggle("selected", r.dataset.id === id);
  const e = await api("events/" + id);
  $("detail").hidden = false;
  $("detail-title").textContent = `${e.source} · ${e.id} · ${e.status}`;
  const headers = Object.entries(e.headers).map(([k, v]) => `${k}: ${v.join(", ")}`).join("\n");
  $("request").textContent = `${e.method} ${e.path}${e.query ? "?" + e.query : ""}\nHost: ${e.host}\nFrom: ${e.remote_addr}\nReceived: ${e.received_at}\nOrigin: ${e.origin}\n${e.dedup_key ? "Dedup key: " + e.dedup_key + "\n" : ""}${e.quarantined ? "Quarantined: " + e.quarantined + "\n" : ""}${Object.entries(e.search || {}).map(([k, v]) => `Search ${k}: ${v}\n`).join("")}\n${headers}`;
  let body = e.body;
  if (!e.body_base64) { try { body = JSON.stringify(JSON.parse(e.body), null, 2); } catch (_) { /* not JSON */ } }
  $("body").textContent = body;
  const list = $("deliveries");
  list.replaceChildren();
  if (e.deliveries.length === 0) list.append(el("p", { class: "muted" }, "No deliveries: the event is " + e.status + "."));
  for (const d of e.deliveries) {
    const attempts = el("ol", {});
    for (const a of d.history) {
      const ok = a.status >= 200 && a.status < 300;
      const item = el("li", { class: ok ? "ok" : "bad" },
        `${new Date(a.at).toLocaleTimeString()} · attempt ${a.n} · ${a.status || "no answer"} · ${(a.duration_ns / 1e6).toFixed(1)} ms${a.error ? " · " + a.error : ""}`);
      // What the upstream answered, as much as the gateway keeps of it.
      if (a.response) item.append(el("pre", { class: "answer" }, a.response));
      attempts.append(item);
    }
    list.append(el("div", { class: "delivery" },
      el("strong", {}, d.upstream), ` via route ${d.route || "—"} · `, el("span", { class: "badge " + d.state }, d.state),
      d.state === "pending" ? ` · next attempt ${new Date(d.next_at).toLocaleTimeString()}` : "",
      attempts));
  }
}

async function act(action) {
  if (!selected) return;
  $("action-result").textContent = "…";
  try {
    const r = await api(`events/${selected}/${action}`, { method: "POST" });
    $("action-result").textContent = Object.entries(r).map(([k, v]) => `${k}: ${v}`).join(", ");
  } catch (err) {
    $("action-result").textContent = err.message;
  }
  setTimeout(() => { showEvent(selected); loadEvents(false); loadOverview(); }, 400);
}

function drawChart(points) {
  const svg = $("chart");
  svg.replaceChildren();
  const max = Math.max(1, ...points.map((p) => Math.max(p.received, p.delivered + p.failed)));
  const w = 600 / Math.max(points.length, 1);
  points.forEach((p, i) => {
    const x = i * w;
    const bar = (cls, value, offset, width) => {
      const h = (value / max) * 110;
      const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      r.setAttribute("class", cls);
      r.setAttribute("x", x + offset);
      r.setAttribute("y", 115 - h);
      r.setAttribute("width", width);
      r.setAttribute("height", h);
      const t = document.createElementNS("http://www.w3.org/2000/svg", "title");
      t.textContent = `${new Date(p.minute).toLocaleTimeString()}: ${value} ${cls}`;
      r.append(t);
      svg.append(r);
    };
    bar("received", p.received, 0, w * 0.45);
    bar("delivered", p.delivered, w * 0.5, w * 0.45);
    bar("failed", p.failed, w * 0.5, w * 0.45 * (p.failed / Math.max(1, p.delivered + p.failed)));
  });
}

async function loadOverview() {
  const [stats, timeline] = await Promise.all([api("stats"), api("timeline?minutes=60")]);
  $("store").textContent = stats.store;
  const counters = $("counters");
  counters.replaceChildren();
  const received = Object.values(stats.requests || {}).reduce((n, m) => n + (m.accepted || 0), 0);
  for (const [label, value] of [["events", stats.events], ["received", received], ["pending", stats.pending],
    ["delivered", stats.delivered], ["dead", stats.dead], ["oldest pending", Math.round(stats.oldest_pending_seconds) + " s"]]) {
    counters.append(el("div", { class: "counter" }, el("b", {}, value), label));
  }
  drawChart(timeline.points);
  const runs = Object.entries(stats.reconcile || {});
  $("reconcile-panel").hidden = runs.length === 0;
  $("reconcile").replaceChildren(...runs.map(([source, r]) => el("tr", { "data-source": source },
    el("td", {}, source),
    el("td", {}, r.last_run ? new Date(r.last_run).toLocaleString() : "not yet"),
    el("td", {}, el("span", { class: "badge " + (r.outcome === "ok" ? "delivered" : "dead") }, r.outcome || "—")),
    el("td", {}, r.through && !r.through.startsWith("0001") ? new Date(r.through).toLocaleString() : "—"))));
}

// The upstreams, each with a pause or resume button. A paused upstream
// receives nothing; its deliveries wait, without burning attempts.
async function loadUpstreams() {
  const data = await api("upstreams");
  const tbody = $("upstreams");
  tbody.replaceChildren();
  for (const u of data.upstreams) {
    const action = u.paused ? "resume" : "pause";
    const button = el("button", { class: action, type: "button" }, u.paused ? "Resume" : "Pause");
    button.addEventListener("click", () => setPaused(u.name, action, button));
    tbody.append(el("tr", { "data-upstream": u.name },
      el("td", {}, u.name),
      el("td", {}, el("span", { class: "badge " + u.state }, u.state)),
      el("td", { class: "pending" }, u.pending),
      el("td", {}, Math.round(u.oldest_pending_seconds) + " s"),
      el("td", {}, u.dead),
      el("td", {}, u.breaker),
      el("td", {}, button)));
  }
}

async function setPaused(name, action, button) {
  button.disabled = true;
  $("upstream-result").textContent = "…";
  try {
    const u = await api(`upstreams/${encodeURIComponent(name)}/${action}`, { method: "POST" });
    $("upstream-result").textContent = `${u.name}: ${u.state}`;
  } catch (err) {
    $("upstream-result").textContent = err.message;
  }
  await loadUpstreams().catch(() => {});
  setTimeout(() => { loadEvents(false); loadOverview(); }, 400);
}

// The refused requests, newest first across sources (the source filter
// narrows them): "why is Stripe getting 401?" answered on the page.
async function loadRejected() {
  const q = new URLSearchParams({ limit: "20" });
  if ($("source").value) q.set("source", $("source").value);
  const data = await api("rejected?" + q).catch(() => ({ sources: {} }));
  const rows = [];
  let dropped = 0;
  for (const [source, log] of Object.entries(data.sources || {})) {
    dropped += log.dropped || 0;
    for (const r of log.records || []) rows.push({ ...r, source });
  }
  rows.sort((a, b) => b.at.localeCompare(a.at));
  $("rejected-count").textContent = `(${rows.length} kept${dropped ? `, ${dropped} more not kept` : ""})`;
  const tbody = $("rejected");
  tbody.replaceChildren();
  for (const r of rows.slice(0, 50)) {
    const row = el("tr", { "data-source": r.source, "data-reason": r.reason },
      el("td", {}, new Date(r.at).toLocaleString()),
      el("td", {}, r.source),
      el("td", {}, r.client_ip || "—"),
      el("td", {}, r.status),
      el("td", {}, el("span", { class: "badge dead" }, r.reason), r.detail ? " " + r.detail : ""),
      el("td", {}, `${r.method} ${r.path}`));
    const headers = Object.entries(r.headers || {}).map(([k, v]) => `${k}: ${v.join(", ")}`).join("\n");
    const more = el("tr", { class: "rejected-headers", hidden: "" }, el("td", { colspan: "6" }, el("pre", {}, headers + (r.body ? "\n\n" + r.body : ""))));
    row.addEventListener("click", () => { more.hidden = !more.hidden; });
    tbody.append(row, more);
  }
}

$("filters").addEventListener("submit", (ev) => { ev.preventDefault(); loadEvents(false); loadRejected(); });
$("more").addEventListener("click", () => loadEvents(true));
$("replay").addEventListener("click", () => act("replay"));
$("cancel").addEventListener("click", () => act("cancel"));
window.addEventListener("hashchange", () => {
  const m = location.hash.match(eventLink);
  if (m && m[1] !== selected) showEvent(m[1]).catch((err) => { $("action-result").textContent = err.message; });
});
loadEvents(false);
loadOverview();
loadUpstreams();
loadRejected();
{
  const m = location.hash.match(eventLink);
  if (m) showEvent(m[1]).catch((err) => { $("detail").hidden = false; $("detail-title").textContent = err.message; });
}
setInterval(() => { loadOverview(); loadUpstreams(); loadRejected(); }, 15000);
