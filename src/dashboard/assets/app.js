// tablecam dashboard: renders the snapshots the server pushes (server-sent events). No framework,
// no build step; data goes into the DOM through textContent/attributes only, never as HTML.
'use strict';
const SVG = 'http://www.w3.org/2000/svg';
const SUITS = { S: '\u2660', H: '\u2665', D: '\u2666', C: '\u2663' };
const tileCache = new Map(); // table id -> JSON of what its tile shows, to redraw only changed tiles
const handCache = new Map(); // table id -> Map(zone -> { key, node }): a redrawn tile reuses unchanged hands

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// One card as a small SVG: face up with its code, face up unknown as '?', face down as a back.
function cardSvg(c) {
  const s = svg('svg', { class: 'card', viewBox: '0 0 26 36', role: 'img' });
  if (!c.face_up) {
    s.setAttribute('data-card', 'back');
    s.setAttribute('aria-label', 'face down');
    s.append(svg('rect', { x: 0.5, y: 0.5, width: 25, height: 35, rx: 3, fill: '#24508f', stroke: '#fff' }));
    s.append(svg('rect', { x: 4, y: 4, width: 18, height: 28, rx: 2, fill: 'none', stroke: '#9cf', 'stroke-dasharray': '2 2' }));
    return s;
  }
  s.append(svg('rect', { x: 0.5, y: 0.5, width: 25, height: 35, rx: 3, fill: '#fff', stroke: '#333' }));
  if (!c.card) {
    s.setAttribute('data-card', '?');
    s.setAttribute('aria-label', 'face up, not read yet');
    s.append(svg('text', { x: 13, y: 24, 'text-anchor': 'middle', 'font-size': 16, fill: '#888' }, '?'));
    return s;
  }
  const rank = c.card.slice(0, -1), suit = c.card.slice(-1);
  const colour = suit === 'H' || suit === 'D' ? '#c00' : '#000';
  s.setAttribute('data-card', c.card);
  s.setAttribute('aria-label', c.card);
  s.append(svg('text', { x: 13, y: 15, 'text-anchor': 'middle', 'font-size': 12, 'font-weight': 'bold', fill: colour }, rank));
  s.append(svg('text', { x: 13, y: 31, 'text-anchor': 'middle', 'font-size': 14, fill: colour }, SUITS[suit] || suit));
  return s;
}

function zoneKey(z) {
  if (z === 'dealer') return [0, 0];
  if (z === 'community') return [1, 0];
  const m = /^seat (\d+)$/.exec(z);
  return m ? [2, Number(m[1])] : [3, 0];
}

function wagerText(w) {
  return (w || []).map(x => x.bet + (x.stake != null ? ' ' + x.stake : '')).join(', ');
}

function tile(t) {
  const flagged = t.flags.length > 0;
  const div = el('div', { class: 'tile' + (flagged ? ' flagged' : ''), 'data-table': t.table });
  div.append(el('h3', {}, el('span', {}, t.table), el('span', { class: 'phase' }, (t.phase || 'idle').replace(/_/g, ' '))));
  const meta = el('div', { class: 'meta' }, (t.ruleset || 'ruleset not known yet') + ' · ');
  if (t.round_id) {
    const b = el('button', { type: 'button', class: 'round', title: 'open the evidence of this round' }, t.round_id);
    b.addEventListener('click', () => openEvidence(t.table, t.round_id));
    meta.append(b);
  } else meta.append('no round');
  div.append(meta);
  // Hands: every zone with cards, and every seat with a bet even before its cards arrive.
  const zones = new Map();
  for (const c of t.cards) { if (!zones.has(c.zone)) zones.set(c.zone, []); zones.get(c.zone).push(c); }
  for (const s of t.seats_with_bets) if (!zones.has('seat ' + s)) zones.set('seat ' + s, []);
  for (const s of Object.keys(t.wagers)) if (!zones.has('seat ' + s)) zones.set('seat ' + s, []);
  const names = [...zones.keys()].sort((a, b) => { const x = zoneKey(a), y = zoneKey(b); return x[0] - y[0] || x[1] - y[1]; });
  const oldHands = handCache.get(t.table) || new Map();
  const hands = new Map();
  for (const z of names) {
    const m = /^seat (\d+)$/.exec(z);
    let txt = '';
    if (m) {
      const w = t.wagers[m[1]];
      txt = w ? wagerText(w) : (t.seats_with_bets.includes(Number(m[1])) ? 'chips' : '');
    }
    const key = JSON.stringify([zones.get(z), txt]);
    let hit = oldHands.get(z);
    if (!hit || hit.key !== key) {
      const h = el('div', { class: 'hand', 'data-zone': z }, el('span', { class: 'who' }, z));
      for (const c of zones.get(z)) h.append(cardSvg(c));
      if (txt) h.append(el('span', { class: 'bets' }, txt));
      hit = { key, node: h };
    }
    hands.set(z, hit);
    div.append(hit.node);
  }
  handCache.set(t.table, hands);
  if (t.outcome) {
    const o = t.outcome;
    const v = o.verification || {};
    const box = el('div', { class: 'outcome' },
      el('div', {}, 'Outcome: ' + o.status + (o.void_citation ? ' (' + o.void_citation + ')' : '') +
        (o.dealer_hand ? ' · dealer ' + o.dealer_hand : '')),
      el('div', { class: v.status === 'verified' ? 'verified' : 'unverified' },
        (v.status || 'unknown') + ((v.reasons || []).length ? ': ' + v.reasons.join('; ') : '')));
    for (const hand of o.hands || []) {
      const bets = (hand.bets || []).map(b => b.bet + ' ' + b.outcome + (b.net_amount != null ? ' ' + b.net_amount : '')).join(', ');
      box.append(el('div', {}, 'seat ' + hand.seat + ': ' + (hand.hand || '—') + (bets ? ' · ' + bets : '')));
    }
    div.append(box);
  } else {
    div.append(el('div', { class: 'outcome' }, 'not settled'));
  }
  if (flagged) div.append(el('div', { class: 'meta' }, t.flags.length + ' flag(s) this round'));
  return div;
}

function renderTables(tables) {
  const root = document.getElementById('tables');
  const seen = new Set();
  for (const t of tables) {
    seen.add(t.table);
    // Sequence number and time move with every event, even one that changes nothing shown.
    const key = JSON.stringify({ ...t, last_seq: 0, last_time_ms: 0 });
    if (tileCache.get(t.table) === key) continue;
    tileCache.set(t.table, key);
    const fresh = tile(t);
    const old = root.querySelector('[data-table="' + CSS.escape(t.table) + '"]');
    if (old) old.replaceWith(fresh); else root.append(fresh);
  }
  for (const e of [...root.children]) {
    if (!seen.has(e.dataset.table)) { tileCache.delete(e.dataset.table); handCache.delete(e.dataset.table); e.remove(); }
  }
}

// Alerts and health rows are rebuilt only when they change, and otherwise reused: with 50 tables a
// push comes every 100 ms and the alert list holds hundreds of entries.
const alertCache = new Map(); // alert id -> { key, li }
const healthCache = new Map(); // table/camera -> { key, rows }

function alertItem(a) {
  const li = el('li', { class: 'alert' + (a.acked ? ' acked' : ''), 'data-alert': a.id });
  li.append(el('div', {}, el('b', {}, a.irregularity), ' · ', a.table, a.seat != null ? ' seat ' + a.seat : ' (dealer/round)'));
  li.append(el('div', {}, 'consequence: ' + ((a.consequence && a.consequence.kind) || '?')));
  li.append(el('div', { class: 'cite' }, a.citation));
  li.append(el('div', { class: 'meta' }, a.detail));
  li.append(el('div', { class: 'meta' }, (a.round_id || '') + ' · t=' + (a.time_ms / 1000).toFixed(1) + ' s (camera time)'));
  if (a.acked) li.append(el('div', { class: 'meta' }, 'acknowledged by ' + a.acked[0] + ' at ' + a.acked[1]));
  else {
    const b = el('button', { type: 'button', class: 'ack' }, 'Acknowledge');
    b.addEventListener('click', () => acknowledge(a.id, b));
    li.append(b);
  }
  return li;
}

// Puts `nodes` in `parent` unless they are already there, in that order.
function setChildren(parent, nodes) {
  const kids = parent.children;
  if (nodes.length === kids.length && nodes.every((n, i) => kids[i] === n)) return;
  parent.replaceChildren(...nodes);
}

function renderAlerts(alerts) {
  const live = new Set();
  const nodes = alerts.map(a => {
    live.add(a.id);
    const key = a.acked ? a.acked.join('|') : '';
    const hit = alertCache.get(a.id);
    if (hit && hit.key === key) return hit.li;
    const li = alertItem(a);
    alertCache.set(a.id, { key, li });
    return li;
  });
  for (const id of [...alertCache.keys()]) if (!live.has(id)) alertCache.delete(id);
  setChildren(document.getElementById('alerts'), nodes);
}

function healthRows(h) {
  const rows = [];
  if (h.link) rows.push(el('tr', {}, el('td', { colspan: 7, class: 'unverified' }, h.table + ': ' + h.link)));
  for (const s of h.stages) {
    rows.push(el('tr', {}, el('td', {}, h.camera + ' / ' + s.stage), el('td', {}, s.received), el('td', {}, s.sent),
      el('td', {}, s.dropped), el('td', {}, s.errors), el('td', {}, s.latency_ms_p50), el('td', {}, s.latency_ms_p99)));
  }
  return rows;
}

const healthHead = el('tr', {}, ...['camera / stage', 'recv', 'sent', 'drop', 'err', 'p50 ms', 'p99 ms'].map(h => el('th', {}, h)));
let errorsKey = null;

function renderHealth(health, errors) {
  const nodes = [healthHead];
  const live = new Set();
  for (const h of health) {
    const id = h.table + '/' + h.camera;
    live.add(id);
    const key = JSON.stringify(h);
    let hit = healthCache.get(id);
    if (!hit || hit.key !== key) { hit = { key, rows: healthRows(h) }; healthCache.set(id, hit); }
    nodes.push(...hit.rows);
  }
  for (const id of [...healthCache.keys()]) if (!live.has(id)) healthCache.delete(id);
  setChildren(document.getElementById('health'), nodes);
  const ek = JSON.stringify(errors);
  if (ek !== errorsKey) {
    errorsKey = ek;
    document.getElementById('inputerrors').replaceChildren(...errors.map(e => el('div', { class: 'error' }, e)));
  }
}

function render(state) {
  renderTables(state.tables);
  renderAlerts(state.alerts);
  renderHealth(state.health, state.input_errors);
}

async function acknowledge(id, button) {
  button.disabled = true;
  const r = await fetch('/api/ack', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ alert: id }) });
  if (r.status === 401) location.href = '/login';
  else if (!r.ok) { button.disabled = false; alert('acknowledgement failed: ' + (await r.text())); }
  // Success shows up through the stream, for this browser and every other.
}

function openEvidence(table, round) {
  document.getElementById('paneltitle').textContent = 'Evidence: ' + table + ' ' + round;
  document.getElementById('panelframe').src = '/evidence/' + encodeURIComponent(table) + '/' + encodeURIComponent(round) + '/';
  document.getElementById('panel').hidden = false;
}
document.getElementById('panelclose').addEventListener('click', () => {
  document.getElementById('panel').hidden = true;
  document.getElementById('panelframe').src = 'about:blank';
});

function setConn(text, cls) { const c = document.getElementById('conn'); c.textContent = text; c.className = 'conn ' + cls; }

async function start() {
  // One fetch for the first picture (and to learn who is logged in), then the stream.
  const r = await fetch('/api/state');
  if (r.status === 401) { location.href = '/login'; return; }
  const first = await r.json();
  document.getElementById('user').textContent = first.user;
  render(first.state);
  const es = new EventSource('/api/stream');
  es.onopen = () => setConn('live', 'live');
  // Only the newest snapshot is drawn: ones that arrive while the page is busy are skipped.
  let latest = null;
  es.onmessage = e => {
    if (latest === null) setTimeout(() => { const d = latest; latest = null; render(JSON.parse(d)); }, 0);
    latest = e.data;
  };
  es.onerror = async () => {
    setConn('reconnecting…', 'down');
    const s = await fetch('/api/state').catch(() => null);
    if (s && s.status === 401) location.href = '/login';
  };
}
start();
