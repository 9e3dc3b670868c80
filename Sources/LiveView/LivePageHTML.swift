// The live view's page: one HTML document with its CSS and vanilla JavaScript, served from the
// binary (no file, no CDN: the view works offline and loads nothing from elsewhere).
//
// The list is virtual (only the rows in view are in the DOM), so 100,000 flows scroll and filter
// smoothly. Flows arrive over server-sent events after the backlog is read from /api/flows.
enum LivePageHTML {
    static let page = #"""
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>harrec live</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
:root { --row: 24px; --fg: #1d2330; --dim: #8a93a6; --line: #e3e7ee; --accent: #2f6fde; --err: #c8322b; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--fg); height: 100vh; display: flex; flex-direction: column; }
header { display: flex; gap: 8px; align-items: center; padding: 8px 10px; border-bottom: 1px solid var(--line); background: #f7f8fb; }
header h1 { font-size: 14px; margin: 0 8px 0 0; }
header input[type=search], header input[type=text] { padding: 4px 6px; border: 1px solid #c9cfdb; border-radius: 4px; font: inherit; }
#filter { flex: 1; min-width: 160px; }
button { font: inherit; padding: 4px 10px; border: 1px solid var(--accent); background: var(--accent); color: white; border-radius: 4px; cursor: pointer; }
button.plain { background: white; color: var(--accent); }
#counts { color: var(--dim); white-space: nowrap; }
main { flex: 1; display: flex; min-height: 0; }
#list { flex: 1 1 55%; overflow-y: auto; position: relative; border-right: 1px solid var(--line); }
#spacer { position: relative; }
.row { position: absolute; left: 0; right: 0; height: var(--row); display: flex; gap: 8px; align-items: center; padding: 0 8px; white-space: nowrap; cursor: pointer; border-bottom: 1px solid #f1f3f7; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.row:hover { background: #f3f6fd; }
.row.selected { background: #dfe9fc; }
.row.error .status { color: var(--err); font-weight: 600; }
.row.excluded { opacity: .45; }
.row.excluded .url { text-decoration: line-through; }
.actions { margin: 6px 0; display: flex; gap: 6px; flex-wrap: wrap; }
.row.page { background: #eef1f6; color: #3c4658; font-family: inherit; font-weight: 600; cursor: default; }
.row .seq { width: 48px; color: var(--dim); text-align: right; }
.row .method { width: 56px; }
.row .status { width: 40px; }
.row .transport { width: 24px; color: var(--dim); }
.row .url { flex: 1; overflow: hidden; text-overflow: ellipsis; }
.row .size, .row .ms { width: 64px; text-align: right; color: var(--dim); }
#detail { flex: 1 1 45%; overflow: auto; padding: 10px 12px; }
#detail h2 { font-size: 13px; margin: 14px 0 6px; }
#detail .empty { color: var(--dim); margin-top: 40px; text-align: center; }
table.fields { border-collapse: collapse; width: 100%; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
table.fields td { border-bottom: 1px solid #f1f3f7; padding: 2px 6px; vertical-align: top; word-break: break-all; }
table.fields td:first-child { color: #5b6478; width: 30%; }
pre { background: #f7f8fb; padding: 8px; border-radius: 4px; overflow: auto; max-height: 420px; margin: 0; font-size: 12px; }
.tabs { display: flex; gap: 4px; margin: 8px 0; flex-wrap: wrap; }
.tabs button { background: white; color: var(--fg); border-color: #c9cfdb; }
.tabs button.on { background: var(--accent); color: white; border-color: var(--accent); }
.error-box { background: #fdecea; color: #8c1d18; padding: 6px 8px; border-radius: 4px; margin: 6px 0; }
.bar { display: flex; align-items: center; gap: 6px; font-size: 12px; margin: 2px 0; }
.bar span.label { width: 60px; color: #5b6478; }
.bar .track { flex: 1; position: relative; height: 10px; background: #f1f3f7; }
.bar .fill { position: absolute; top: 0; bottom: 0; background: var(--accent); min-width: 1px; }
.msg { max-width: 80%; margin: 4px 0; padding: 4px 8px; border-radius: 8px; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
.msg.send { background: #dfe9fc; margin-left: auto; }
.msg.receive { background: #eef1f6; }
details.json { margin-left: 12px; }
details.json > summary { cursor: pointer; }
.json-key { color: #7a3e9d; }
.json-str { color: #116329; }
.json-num { color: #0550ae; }
img.body { max-width: 100%; border: 1px solid var(--line); }
.row.page a.gen { margin-left: 12px; font-weight: normal; color: var(--accent); cursor: pointer; }
.sides { display: flex; gap: 8px; }
.sides > div { flex: 1; min-width: 0; }
.sides pre { max-height: 520px; }
mark.changed { background: #ffe08a; }
mark.raw { background: #ffd6d3; }
</style></head>
<body>
<header>
  <h1>harrec live</h1>
  <input id="filter" type="search" placeholder="Filter: text, status:4xx, method:POST, host:api, type:json, is:error, body:text">
  <label><input id="errorsOnly" type="checkbox"> errors</label>
  <span id="counts">0 flows</span>
  <input id="markName" type="text" placeholder="scenario name" size="16">
  <button id="mark">Mark scenario</button>
  <button id="genShown" class="plain" title="harrec generate for the flows the filter shows">Swift for shown</button>
  <button id="exportNow" class="plain" title="The HAR of what is recorded so far, as the final one will be">Export HAR now</button>
</header>
<main>
  <div id="list"><div id="spacer"></div></div>
  <div id="detail"><div class="empty">Select a flow to see it whole.</div></div>
</main>
<script>
"use strict";
const flows = [];          // summaries by seq
const pages = [];          // {index, title, started, firstSeq}
let rows = [];             // what the list shows: {page} or {flow}
let selected = null;
const excludedHosts = new Set();  // hosts whose flows the HAR leaves out
const ROW = 24;
const list = document.getElementById("list"), spacer = document.getElementById("spacer");
const detail = document.getElementById("detail");
const esc = s => String(s).replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const size = n => n < 1024 ? n + " B" : n < 1 << 20 ? (n / 1024).toFixed(1) + " kB" : (n / 1048576).toFixed(1) + " MB";

function matches(f, terms, errorsOnly) {
  const failed = f.error || (f.status !== null && f.status >= 400);
  if (errorsOnly && !failed) return false;
  for (const t of terms) {
    const [k, v] = t.includes(":") ? [t.slice(0, t.indexOf(":")), t.slice(t.indexOf(":") + 1)] : ["", t];
    if (k === "status") { const s = String(f.status ?? "0"); if (!(v.endsWith("xx") ? s[0] === v[0] : s === v)) return false; }
    else if (k === "method") { if (f.method.toLowerCase() !== v) return false; }
    else if (k === "host") { if (!hostOf(f.url).includes(v)) return false; }
    else if (k === "type") { if (!(f.mimeType || "").toLowerCase().includes(v)) return false; }
    else if (k === "is" && v === "error") { if (!failed) return false; }
    else if (k === "is" && v === "ws") { if (f.transport !== "ws") return false; }
    else if (k === "is" && v === "out") { if (!f.excluded) return false; }
    else if (k === "body") { if (!bodySearch || bodySearch.text !== v || !bodySearch.ids.has(f.id)) return false; }
    else if (!(f.method + " " + f.url + " " + (f.status ?? "") + " " + (f.mimeType || "") + " " + (f.error || "")).toLowerCase().includes(t)) return false;
  }
  return true;
}
function hostOf(url) { const m = /^[a-z]+:\/\/([^\/?#]+)/i.exec(url); return m ? m[1].toLowerCase() : ""; }

// body:TEXT is answered by the server (it reads the bodies from the journal); the ids come back.
let bodySearch = null, searching = null;
async function searchBodies(text) {
  if (searching === text || (bodySearch && bodySearch.text === text)) return;
  searching = text;
  const r = await fetch(`/api/search?q=${encodeURIComponent(text)}`);
  const j = r.ok ? await r.json() : {ids: []};
  if (searching !== text) return;
  searching = null;
  bodySearch = {text: text, ids: new Set(j.ids)};
  rebuild();
}

function rebuild() {
  const terms = document.getElementById("filter").value.toLowerCase().split(/\s+/).filter(Boolean);
  const body = terms.find(t => t.startsWith("body:") && t.length > 5);
  if (body && (!bodySearch || bodySearch.text !== body.slice(5))) searchBodies(body.slice(5));
  const errorsOnly = document.getElementById("errorsOnly").checked;
  // Flows by page (a flow moved to another page sits in that page's section), each in finish order.
  const byPage = new Map();
  let shown = 0;
  for (const f of flows) {
    if (!f || !matches(f, terms, errorsOnly)) continue;
    if (!byPage.has(f.page)) byPage.set(f.page, []);
    byPage.get(f.page).push(f);
    shown += 1;
  }
  rows = [];
  for (let page = -1; page < pages.length; page++) {
    if (page >= 0 && pages[page]) rows.push({page: pages[page]});
    for (const f of byPage.get(page) || []) rows.push({flow: f});
  }
  document.getElementById("counts").textContent = (searching ? "searching bodies… " : "") + (shown === flows.length ? "" : shown + " of ") + flows.length + " flows";
  spacer.style.height = rows.length * ROW + "px";
  // A shorter list (a narrower filter) keeps the view inside it.
  const bottom = Math.max(0, rows.length * ROW - list.clientHeight);
  if (list.scrollTop > bottom) list.scrollTop = bottom;
  render();
}

function render() {
  const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 10);
  const last = Math.min(rows.length, first + Math.ceil(list.clientHeight / ROW) + 20);
  const html = [];
  for (let i = first; i < last; i++) {
    const r = rows[i];
    if (r.page) { html.push(`<div class="row page" style="top:${i * ROW}px">▸ ${esc(r.page.title)}<a class="gen" data-page="${r.page.index}">Generate Swift</a></div>`); continue; }
    const f = r.flow;
    const failed = f.error || (f.status !== null && f.status >= 400);
    html.push(`<div class="row${failed ? " error" : ""}${f.excluded ? " excluded" : ""}${selected === f.id ? " selected" : ""}" data-id="${f.id}" style="top:${i * ROW}px">` +
      `<span class="seq">${f.seq + 1}</span><span class="method">${esc(f.method)}</span>` +
      `<span class="status">${f.status ?? (f.error ? "ERR" : "…")}</span><span class="transport">${f.replayItem ? "rp" : f.transport}</span>` +
      `<span class="url" title="${esc(f.replayItem ? f.url + " \u2190 " + f.replayItem : f.url)}">${esc(f.url)}</span><span class="size">${f.replayItem ? "" : size(f.responseBytes || 0)}</span>` +
      `<span class="ms">${f.open ? "open" : f.ms.toFixed(0) + " ms"}</span></div>`);
  }
  spacer.innerHTML = html.join("");
}

function upsert(batch) {
  const atBottom = list.scrollTop + list.clientHeight >= spacer.offsetHeight - ROW * 2;
  let reshow = false;
  for (const f of batch) { flows[f.seq] = f; reshow = reshow || selected === f.id; }
  scheduleRebuild(atBottom);
  if (reshow) showDetail(selected, false);
}
let pending = false;
function scheduleRebuild(follow) {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; rebuild(); if (follow) list.scrollTop = spacer.offsetHeight; });
}

async function load() {
  let from = 0, cursor = 0;
  for (;;) {
    const r = await fetch(`/api/flows?from=${from}&limit=5000`);
    const j = await r.json();
    j.pages.forEach(p => { pages[p.index] = p; });
    j.flows.forEach(f => { flows[f.seq] = f; });
    from += j.flows.length;
    cursor = j.cursor;
    if (from >= j.total || j.flows.length === 0) break;
  }
  const status = await (await fetch("/api/status")).json();
  status.excludedHosts.forEach(h => excludedHosts.add(h));
  rebuild();
  const events = new EventSource(`/api/events?cursor=${cursor}`);
  events.addEventListener("flows", e => upsert(JSON.parse(e.data)));
  events.addEventListener("page", e => { const p = JSON.parse(e.data); pages[p.index] = p; scheduleRebuild(true); });
}

// ---- detail
let tab = "headers";
async function showDetail(id, scroll) {
  selected = id;
  render();
  let r;
  for (let tries = 0; tries < 10; tries++) {
    r = await fetch(`/api/flows/${id}`);
    if (r.status !== 503) break;
    await new Promise(ok => setTimeout(ok, 300));
  }
  if (!r.ok) { detail.innerHTML = `<div class="error-box">${esc(await r.text())}</div>`; return; }
  const d = await r.json();
  if (selected !== id) return;
  detail.innerHTML = detailHTML(d);
  detail.querySelectorAll(".tabs button").forEach(b => b.addEventListener("click", () => { tab = b.dataset.tab; showDetail(id, false); }));
  detail.querySelector("#exclude").addEventListener("click", async e => {
    await fetch(`/api/flows/${id}/${e.target.dataset.excluded === "1" ? "include" : "exclude"}`, {method: "POST"});
  });
  detail.querySelectorAll("#pagePrevious, #pageNext").forEach(b => b.addEventListener("click", async () => {
    await fetch(`/api/flows/${id}/page?to=${b.dataset.to}`, {method: "POST"});
  }));
  detail.querySelector("#excludeHost").addEventListener("click", async e => {
    const leave = e.target.dataset.excluded !== "1";
    await fetch(`/api/hosts/${leave ? "exclude" : "include"}?host=${encodeURIComponent(e.target.dataset.host)}`, {method: "POST"});
    if (leave) excludedHosts.add(e.target.dataset.host); else excludedHosts.delete(e.target.dataset.host);
    showDetail(id, false);
  });
  const preview = detail.querySelector("#redaction");
  if (preview) showRedaction(preview, id);
  const copy = detail.querySelector("#copyCurl");
  if (copy) copy.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(curlOf(d)));
  if (scroll) detail.scrollTop = 0;
}

function fieldsTable(fields) {
  return `<table class="fields">${fields.map(([n, v]) => `<tr><td>${esc(n)}</td><td>${esc(v)}</td></tr>`).join("")}</table>`;
}

function bodyHTML(b) {
  if (!b || b.size === 0) return `<div class="empty">No body.</div>`;
  const note = `<div>${size(b.size)}${b.truncated ? " (the recording kept less)" : ""}${b.shown < b.size ? ", the first " + size(b.shown) + " shown" : ""} ${esc(b.mimeType || "")}</div>`;
  const type = (b.mimeType || "").toLowerCase();
  if (type.startsWith("image/") && b.base64) return note + `<img class="body" src="data:${esc(type.split(";")[0])};base64,${b.base64}">`;
  if (b.text !== undefined) {
    try { if (type.includes("json") || /^\s*[\[{]/.test(b.text)) return note + `<div class="json-root">${jsonTree(JSON.parse(b.text), "", 0)}</div>`; } catch (e) {}
    return note + `<pre>${esc(b.text)}</pre>`;
  }
  return note + `<pre>${hexdump(atob(b.base64))}</pre>`;
}

function jsonTree(v, key, depth) {
  const k = key === "" ? "" : `<span class="json-key">${esc(key)}</span>: `;
  if (v === null || typeof v !== "object") {
    const cls = typeof v === "string" ? "json-str" : "json-num";
    return `<div>${k}<span class="${cls}">${esc(JSON.stringify(v))}</span></div>`;
  }
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
  const label = Array.isArray(v) ? `[${entries.length}]` : `{${entries.length}}`;
  return `<details class="json"${depth < 2 ? " open" : ""}><summary>${k}${label}</summary>${entries.map(([kk, vv]) => jsonTree(vv, kk, depth + 1)).join("")}</details>`;
}

function hexdump(s) {
  const out = [];
  for (let i = 0; i < Math.min(s.length, 4096); i += 16) {
    const chunk = s.slice(i, i + 16);
    const hex = [...chunk].map(c => c.charCodeAt(0).toString(16).padStart(2, "0")).join(" ");
    const text = [...chunk].map(c => { const n = c.charCodeAt(0); return n >= 32 && n < 127 ? c : "."; }).join("");
    out.push(i.toString(16).padStart(8, "0") + "  " + hex.padEnd(48) + "  " + esc(text));
  }
  if (s.length > 4096) out.push("…");
  return out.join("\n");
}

function waterfall(t) {
  const end = t.end || 1;
  const phases = ["dns", "connect", "tls", "send", "wait", "receive"];
  return phases.map(p => {
    const [a, b] = t[p];
    if (a === null || b === null) return `<div class="bar"><span class="label">${p}</span><div class="track"></div><span>-</span></div>`;
    return `<div class="bar"><span class="label">${p}</span><div class="track"><div class="fill" style="left:${(a / end * 100).toFixed(2)}%;width:${((b - a) / end * 100).toFixed(2)}%"></div></div><span>${(b - a).toFixed(1)} ms</span></div>`;
  }).join("") + `<div class="bar"><span class="label">total</span><span>${end.toFixed(1)} ms</span></div>`;
}

function curlOf(d) {
  const q = s => "'" + String(s).replace(/'/g, "'\\''") + "'";
  const parts = ["curl", "-X", d.request.method, q(d.request.url)];
  for (const [n, v] of d.request.headers) parts.push("-H", q(n + ": " + v));
  if (d.request.body && d.request.body.text) parts.push("--data-binary", q(d.request.body.text));
  return parts.join(" ");
}

function detailHTML(d) {
  const s = d.summary || {};
  const tabs = ["headers", "request", "response", "timings"].concat(d.webSocket ? ["messages"] : []).concat(["redaction", "curl"]);
  let html = `<div><b>${esc(d.request.method)}</b> ${esc(d.request.url)}</div>`;
  html += `<div>${d.response ? d.response.status + " " + esc(d.response.reason) : "no response"} · ${esc(d.request.httpVersion)} · ${s.ms !== undefined ? s.ms.toFixed(1) + " ms" : ""}</div>`;
  if (d.error) html += `<div class="error-box">${esc(d.error)}</div>`;
  const host = hostOf(d.request.url);
  const page = s.page ?? -1;
  html += `<div class="actions"><button class="plain" id="exclude" data-excluded="${s.excluded ? 1 : 0}">${s.excluded ? "Put back in the HAR" : "Leave out of the HAR"}</button>` +
    (pages.length && page > -1 ? `<button class="plain" id="pagePrevious" data-to="${page - 1}">◂ ${page - 1 >= 0 ? esc(pages[page - 1].title) : "no page"}</button>` : "") +
    (page + 1 < pages.length ? `<button class="plain" id="pageNext" data-to="${page + 1}">${esc(pages[page + 1].title)} ▸</button>` : "") +
    `<button class="plain" id="excludeHost" data-host="${esc(host)}" data-excluded="${excludedHosts.has(host) ? 1 : 0}">${excludedHosts.has(host) ? "Put " + esc(host) + " back" : "Leave out " + esc(host)}</button></div>`;
  html += `<div class="tabs">${tabs.map(t => `<button data-tab="${t}" class="${t === tab ? "on" : ""}">${t}</button>`).join("")}</div>`;
  if (tab === "headers") {
    html += `<h2>Request headers</h2>${fieldsTable(d.request.headers)}`;
    if (d.response) html += `<h2>Response headers</h2>${fieldsTable(d.response.headers)}`;
    if (d.response && d.response.trailers.length) html += `<h2>Trailers</h2>${fieldsTable(d.response.trailers)}`;
  } else if (tab === "request") {
    html += bodyHTML(d.request.body);
  } else if (tab === "response") {
    html += d.response ? bodyHTML(d.response.body) : `<div class="empty">No response.</div>`;
  } else if (tab === "timings") {
    html += waterfall(d.timings);
  } else if (tab === "messages" && d.webSocket) {
    html += d.webSocket.messages.map(m => `<div class="msg ${m.direction}">${m.text !== undefined ? esc(m.text) : "[" + m.size + " bytes, opcode " + m.opcode + "]"}</div>`).join("") || `<div class="empty">No messages.</div>`;
  } else if (tab === "redaction") {
    html += `<div id="redaction" data-id="${esc(d.id)}" class="empty">Redacting…</div>`;
  } else if (tab === "curl") {
    html += `<pre id="curl">${esc(curlOf(d))}</pre><p><button id="copyCurl" class="plain">Copy as curl</button></p>`;
  }
  return html;
}

// ---- redaction preview: the entry raw and redacted, changed lines marked, and the rules.
async function showRedaction(box, id) {
  const r = await fetch(`/api/flows/${id}/redaction`);
  if (!r.ok) { box.outerHTML = `<div class="error-box">${esc(await r.text())}</div>`; return; }
  const p = await r.json();
  const raw = p.raw.split("\n"), red = p.redacted.split("\n");
  const left = [], right = [];
  for (let i = 0; i < Math.max(raw.length, red.length); i++) {
    const a = raw[i] ?? "", b = red[i] ?? "";
    if (a === b) { left.push(esc(a)); right.push(esc(b)); continue; }
    // The changed span: what is left between the common start and the common end.
    let s = 0; while (s < a.length && s < b.length && a[s] === b[s]) s++;
    let e = 0; while (e < a.length - s && e < b.length - s && a[a.length - 1 - e] === b[b.length - 1 - e]) e++;
    left.push(esc(a.slice(0, s)) + `<mark class="raw">${esc(a.slice(s, a.length - e))}</mark>` + esc(a.slice(a.length - e)));
    right.push(esc(b.slice(0, s)) + `<mark class="changed">${esc(b.slice(s, b.length - e))}</mark>` + esc(b.slice(b.length - e)));
  }
  const rules = {};
  p.findings.forEach(f => { rules[f.rule] = (rules[f.rule] || 0) + 1; });
  box.outerHTML = `<div id="redactionView"><div id="sessionCounts"><button class="plain" id="countSession">Count the whole recording</button></div>` +
    `<div>This flow: ${p.findings.length} replaced: ${Object.entries(rules).map(([k, v]) => esc(k) + " " + v).join(", ") || "nothing"}</div>` +
    `<div class="sides"><div><h2>Recorded</h2><pre>${left.join("\n")}</pre></div><div><h2>In the HAR</h2><pre>${right.join("\n")}</pre></div></div>` +
    `<h2>Rules</h2><table class="fields">${p.findings.map(f => `<tr><td>${esc(f.rule)}</td><td>${esc(f.path)}</td></tr>`).join("")}</table></div>`;
  document.getElementById("countSession").addEventListener("click", countSession);
}

// Per rule, what redaction replaces in the whole recording so far (the export's two passes).
async function countSession() {
  const box = document.getElementById("sessionCounts");
  box.textContent = "Counting…";
  const r = await fetch("/api/redaction");
  if (!r.ok) { box.innerHTML = `<div class="error-box">${esc(await r.text())}</div>`; return; }
  const c = await r.json();
  box.innerHTML = `<b>Whole recording: ${c.total} replaced</b>: ` + (c.rules.map(x => esc(x.rule) + " " + x.count).join(", ") || "nothing");
}

// ---- Swift for a page
async function generateFor(page, ids) {
  detail.innerHTML = `<div class="empty">Generating…</div>`;
  const r = page !== null ? await fetch(`/api/generate?page=${page}`, {method: "POST"})
                          : await fetch(`/api/generate?name=selection`, {method: "POST", body: ids.join(",")});
  if (!r.ok) { detail.innerHTML = `<div class="error-box">${esc(await r.text())}</div>`; return; }
  const g = await r.json();
  detail.innerHTML = `<div><b>harrec generate</b> · ${esc(g.name)} · ${g.files.length} files</div>` + g.files.map((f, k) =>
    `<h2>${esc(f.path)} <button class="plain" data-file="${k}">Download</button></h2><pre>${esc(f.text)}</pre>`).join("");
  detail.querySelectorAll("button[data-file]").forEach(b => b.addEventListener("click", () => {
    const f = g.files[Number(b.dataset.file)];
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([f.text], {type: "text/plain"}));
    a.download = f.path.split("/").pop();
    a.click();
  }));
}

// ---- wiring
list.addEventListener("scroll", render);
window.addEventListener("resize", render);
document.getElementById("filter").addEventListener("input", rebuild);
document.getElementById("errorsOnly").addEventListener("change", rebuild);
spacer.addEventListener("click", e => {
  const gen = e.target.closest("a.gen");
  if (gen) { selected = null; render(); generateFor(gen.dataset.page); return; }
  const row = e.target.closest(".row[data-id]");
  if (row) showDetail(row.dataset.id, true);
});
document.getElementById("genShown").addEventListener("click", () => {
  const ids = rows.filter(r => r.flow).map(r => r.flow.id);
  selected = null;
  render();
  generateFor(null, ids);
});
document.getElementById("exportNow").addEventListener("click", async () => {
  selected = null;
  render();
  detail.innerHTML = `<div class="empty">Writing the HAR…</div>`;
  const r = await fetch("/api/export", {method: "POST"});
  if (!r.ok) { detail.innerHTML = `<div class="error-box">${esc(await r.text())}</div>`; return; }
  const x = await r.json();
  detail.innerHTML = `<div id="exported"><b>${x.entries} entries</b> (${size(x.bytes)}, ${x.redacted ? "redacted" : "raw: secrets included"}) written to <code>${esc(x.path)}</code></div>` +
    (x.download ? `<p><a class="download" href="/api/export/file" download>Download the HAR</a></p>` : `<p>Too large to download here: open the file.</p>`);
});
document.getElementById("mark").addEventListener("click", async () => {
  const input = document.getElementById("markName");
  const name = input.value.trim();
  if (!name) { input.focus(); return; }
  const r = await fetch(`/api/mark?name=${encodeURIComponent(name)}`, {method: "POST"});
  if (r.ok) input.value = "";
});
load();
</script>
</body></html>
"""#
}
