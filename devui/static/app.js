// onion dev: the page. It holds a copy of the UI's state, which the event
// stream keeps current (a snapshot first, then each change), and redraws
// what changed once per frame.

import { $, h, api, rebuild, badge, fmtMS, fmtTokens, fmtCost } from './dom.js';
import { renderTimeline } from './timeline.js';
import { renderTools } from './tools.js';
import { setupReplay } from './replay.js';

const S = {
  agents: [], convs: new Map(), runs: new Map(), approvals: new Map(), usage: [], priced: false,
  conv: null, // the conversation shown
  run: null, // the run whose timeline is shown
  agent: 0, // the agent chosen for new conversations and the tools tab
  toolsFor: -1, // the agent whose tools are drawn
  agentsJSON: '', // the agents as the last snapshot had them
};
const openJSON = new Set();
const jsonCache = new Map();
// Stats the benchmark reads: events applied, and the longest frame.
window.onionDev = { events: 0, snapshots: 0, frames: 0, longestFrameMS: 0 };

// Redrawing: parts marked dirty are redrawn at the next frame; a reply's
// text only patches its own elements.
let dirty = new Set();
let texts = new Set();
let scheduled = false;
function mark(...parts) { for (const p of parts) dirty.add(p); schedule(); }
function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(draw);
  setTimeout(draw, 100); // when frames are not drawn (a hidden tab)
}

function draw() {
  if (!scheduled) return;
  scheduled = false;
  const t0 = performance.now();
  const d = dirty, tx = texts;
  dirty = new Set();
  texts = new Set();
  if (d.has('agents')) drawAgents();
  if (d.has('convs')) drawConvs();
  if (d.has('chat')) drawChat();
  if (d.has('timeline')) drawTimeline();
  if (d.has('approvals')) drawApprovals();
  if (d.has('cost') && !$('panel-cost').hidden) drawCost();
  if (S.toolsFor !== S.agent && !$('panel-tools').hidden) drawTools();
  for (const key of tx) patchText(key);
  const took = performance.now() - t0;
  window.onionDev.frames++;
  window.onionDev.longestFrameMS = Math.max(window.onionDev.longestFrameMS, took);
}

// Events from the UI.

function connect() {
  const es = new EventSource(`/api/events?token=${encodeURIComponent(document.querySelector('meta[name="onion-token"]').content)}`);
  const status = $('connection');
  es.onopen = () => { status.dataset.state = 'open'; status.textContent = 'Connected'; };
  es.onerror = () => {
    status.dataset.state = 'lost';
    status.textContent = es.readyState === EventSource.CLOSED
      ? 'The UI refused the page: reload it' : 'Connection lost: reconnecting…';
  };
  es.onmessage = (m) => {
    window.onionDev.events++;
    apply(JSON.parse(m.data));
  };
}

function runOf(r) {
  const old = S.runs.get(r.id);
  const run = Object.assign(old || { items: [], steps: new Map() }, r);
  if (r.items) {
    run.items = r.items;
    run.steps = new Map(r.items.filter((it) => it && it.kind === 'model').map((it) => [it.step, it]));
  }
  return run;
}

function apply(ev) {
  const d = ev.data;
  switch (ev.type) {
    case 'snapshot': {
      window.onionDev.snapshots++;
      // The agents never change: their forms are drawn again only if
      // they did.
      const agents = JSON.stringify(d.agents);
      if (agents !== S.agentsJSON) { S.agentsJSON = agents; S.toolsFor = -1; }
      S.agents = d.agents;
      S.priced = d.priced;
      S.convs = new Map(d.convs.map((c) => [c.id, c]));
      S.runs = new Map();
      for (const r of d.runs) S.runs.set(r.id, runOf(r));
      S.approvals = new Map(d.approvals.map((a) => [a.id, a]));
      S.usage = d.usage;
      if (!S.convs.has(S.conv)) S.conv = d.convs.length ? d.convs[d.convs.length - 1].id : null;
      if (!S.runs.has(S.run)) S.run = null;
      mark('agents', 'convs', 'chat', 'timeline', 'approvals', 'cost');
      break;
    }
    case 'conv':
      // Only a conversation's first event carries its earlier turns.
      S.convs.set(d.id, Object.assign(S.convs.get(d.id) || {}, d));
      mark('convs');
      if (d.id === S.conv) mark('chat');
      break;
    case 'conv_removed':
      S.convs.delete(d);
      if (S.conv === d) S.conv = [...S.convs.keys()].pop() || null;
      mark('convs', 'chat');
      break;
    case 'run': {
      const fresh = !S.runs.has(d.id);
      S.runs.set(d.id, runOf(d));
      if (fresh && d.conv === S.conv) S.run = d.id;
      if (d.conv === S.conv) mark('chat');
      if (d.id === S.run) mark('timeline');
      if (!fresh && d.status !== 'running') announce(`Run ${d.id} ${d.status}`);
      mark('cost');
      break;
    }
    case 'run_removed':
      S.runs.delete(d);
      if (S.run === d) S.run = null;
      mark('chat', 'timeline', 'cost');
      break;
    case 'model': case 'tool': {
      const r = S.runs.get(d.run);
      if (!r) break;
      r.items[d.item.index] = d.item;
      if (d.item.kind === 'model') {
        const old = r.steps.get(d.item.step);
        // Text that streamed in meanwhile stays until the reply has it all.
        if (old && d.item.status === 'waiting' && (old.text || '').length > (d.item.text || '').length) d.item.text = old.text;
        r.steps.set(d.item.step, d.item);
      }
      if (d.run === S.run) mark('timeline');
      if (r.conv === S.conv) mark('chat');
      break;
    }
    case 'text': {
      const r = S.runs.get(d.run);
      const st = r && r.steps.get(d.step);
      if (!st) break;
      st.text = (st.text || '') + d.text;
      texts.add(`${d.run}:${d.step}`);
      texts.add(`${d.run}:live`);
      schedule();
      break;
    }
    case 'approval':
      S.approvals.set(d.id, d);
      announce(`${d.name} waits for your approval`);
      mark('approvals', 'chat');
      break;
    case 'approval_done':
      S.approvals.delete(d);
      mark('approvals', 'chat');
      break;
    case 'usage':
      S.usage = d;
      mark('cost');
      break;
    case 'error':
      announce(d);
      break;
  }
}

function announce(text) { $('announce').textContent = text; }

// The sidebar: agents and conversations.

function drawAgents() {
  const sel = $('agent');
  rebuild(sel, () => S.agents.map((a, i) => h('option', { value: String(i), text: `${a.name} (${a.tools.length} tools)` })));
  if (S.agent >= S.agents.length) S.agent = 0;
  sel.value = String(S.agent);
}

function drawConvs() {
  const list = [...S.convs.values()].reverse();
  rebuild($('conv-list'), () => list.map((c) => h('li', {},
    h('button', {
      type: 'button', 'data-key': `conv:${c.id}`, 'aria-current': c.id === S.conv ? 'true' : 'false',
      onclick: () => selectConv(c.id),
    }, c.title, h('span', {
      class: 'sub',
      text: `${(S.agents[c.agent] || {}).name || ''} · ${c.runs.length} run${c.runs.length === 1 ? '' : 's'}${c.busy ? ' · answering' : ''}`,
    })))));
}

function selectConv(id) {
  S.conv = id;
  const c = S.convs.get(id);
  S.run = c && c.runs.length ? c.runs[c.runs.length - 1] : null;
  $('saved').hidden = true;
  mark('convs', 'chat', 'timeline');
}

// The chat.

function liveText(r) {
  if (r.status !== 'running') return r.output || (r.status === 'done' ? '(no text)' : '');
  let text = '';
  for (const st of r.steps.values()) if (st.depth === 1) text = st.text || '';
  return text;
}

function statusText(r) {
  if (r.status !== 'running') return r.status;
  for (const a of S.approvals.values()) if (a.run === r.id) return 'waiting for your approval';
  return 'running';
}

function drawChat() {
  const cv = S.convs.get(S.conv);
  $('conv-title').textContent = cv ? cv.title : 'No conversation yet';
  $('save-conv').disabled = !cv;
  $('delete-conv').disabled = !cv || !!cv.busy;
  $('stop').disabled = !(cv && cv.busy);
  $('send').disabled = !!(cv && cv.busy);
  rebuild($('turns'), () => {
    if (!cv) return [h('li', { class: 'hint', text: 'Send a prompt to start a conversation with the agent chosen on the left.' })];
    const out = (cv.earlier || []).map((t) => h('li', { class: `turn ${t.role} earlier` },
      h('span', { class: 'who', text: t.role === 'user' ? 'You (earlier)' : `${t.role} (earlier)` }), h('p', { class: 'answer', text: t.text })));
    if (out.length) out.push(h('li', { class: 'earlier-note', text: 'Above: the conversation as it was loaded.' }));
    for (const id of cv.runs) {
      const r = S.runs.get(id);
      if (!r) continue;
      const tokens = r.status === 'running' ? '' : fmtTokens(r.usage);
      out.push(h('li', { class: 'turn user' }, h('span', { class: 'who', text: 'You' }), h('p', { class: 'answer', text: r.prompt })));
      out.push(h('li', { class: 'turn assistant', 'data-run': r.id, 'data-status': r.status },
        h('span', { class: 'who', text: r.agent }),
        h('p', { class: 'answer', 'data-text-for': `${r.id}:live`, text: liveText(r) }),
        r.error && h('p', { class: 'error run-error', text: r.error }),
        h('div', { class: 'meta' }, badge(statusText(r), `status ${r.status}`), tokens && h('span', { text: tokens }),
          r.cost !== undefined && h('span', { text: fmtCost(r.cost) }),
          h('button', {
            type: 'button', 'data-key': `tl:${r.id}`, 'aria-pressed': String(S.run === r.id),
            onclick: () => { S.run = r.id; selectTab('timeline'); mark('chat', 'timeline'); },
          }, 'Timeline'))));
    }
    return out;
  });
  const turns = $('turns');
  turns.scrollTop = turns.scrollHeight;
}

function patchText(key) {
  const [id, step] = key.split(':');
  const r = S.runs.get(id);
  if (!r) return;
  const text = step === 'live' ? liveText(r) : (r.steps.get(Number(step)) || {}).text || '';
  for (const el of document.querySelectorAll(`[data-text-for="${CSS.escape(key)}"]`)) el.textContent = text;
}

async function ensureConv() {
  if (S.conv && S.convs.has(S.conv)) return S.conv;
  const c = await api('POST', '/api/conversations', { agent: S.agent });
  S.convs.set(c.id, c);
  S.conv = c.id;
  mark('convs', 'chat');
  return c.id;
}

async function send(e) {
  e.preventDefault();
  const prompt = $('prompt').value.trim();
  $('prompt-error').textContent = '';
  if (!prompt) { $('prompt-error').textContent = 'Write a prompt first.'; return; }
  try {
    const id = await ensureConv();
    const { run } = await api('POST', `/api/conversations/${encodeURIComponent(id)}/prompt`, { prompt });
    S.run = run;
    $('prompt').value = '';
    mark('chat', 'timeline');
  } catch (err) {
    $('prompt-error').textContent = err.message;
  }
}

// The timeline tab.

function drawTimeline() {
  const r = S.runs.get(S.run);
  if (!r) {
    rebuild($('run-head'), () => h('p', { class: 'hint', text: 'Send a prompt, or pick a run’s “Timeline”, to see its model requests and tool calls.' }));
    rebuild($('timeline'), () => []);
    return;
  }
  const steps = [...r.steps.values()];
  const use = r.status === 'running' ? sumUsage(steps) : r.usage;
  const took = r.ended ? fmtMS(new Date(r.ended) - new Date(r.started)) : '';
  rebuild($('run-head'), () => [
    h('div', { class: 'line' }, h('h3', { text: `Run ${r.id} of ${r.agent}` }), badge(statusText(r), `status ${r.status}`),
      h('span', { class: 'facts', text: [fmtTokens(use), `${steps.length} model request${steps.length === 1 ? '' : 's'}`, took, r.stop_reason && `stop: ${r.stop_reason}`, S.priced && fmtCost(r.cost)].filter(Boolean).join(' · ') }),
      r.status === 'running' && h('button', { type: 'button', 'data-key': `stop:${r.id}`, onclick: () => stopRun(r.id), text: 'Stop the run' })),
    h('p', { class: 'facts', text: `Prompt: ${r.prompt}` }),
    r.dropped ? h('p', { class: 'facts', text: `${r.dropped} later items not kept (the UI's bound).` }) : null,
  ]);
  rebuild($('timeline'), () => renderTimeline(r.items, {
    prefix: r.id, open: openJSON, cache: jsonCache, key: (step) => `${r.id}:${step}`,
    json: (step) => api('GET', `/api/runs/${encodeURIComponent(r.id)}/steps/${step}`),
  }));
}

function sumUsage(steps) {
  const u = { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 };
  for (const st of steps) {
    if (!st.usage) continue;
    u.prompt_tokens += st.usage.prompt_tokens;
    u.completion_tokens += st.usage.completion_tokens;
    u.cached_tokens += st.usage.cached_tokens || 0;
  }
  return u;
}

async function stopRun(id) {
  try { await api('POST', `/api/runs/${encodeURIComponent(id)}/stop`, {}); } catch (err) { announce(err.message); }
}

// Approvals.

function drawApprovals() {
  const list = [...S.approvals.values()];
  $('approvals').hidden = list.length === 0;
  rebuild($('approval-list'), () => list.map((a) => h('li', { 'data-approval': a.id, 'data-call-id': a.call_id },
    h('h3', {}, `${a.name} `, badge(a.intent || 'write'), ` · run ${a.run}`),
    a.agents && a.agents.length && h('p', { class: 'facts', text: `Asked by ${a.agents.join(' → ')}` }),
    h('p', { class: 'label', text: 'Arguments, whole' }),
    h('pre', { class: 'args', tabindex: 0, text: a.arguments }),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'approve primary', 'data-key': `approve:${a.id}`, onclick: () => answer(a.id, true) }, `Approve ${a.name}`),
      h('button', { type: 'button', class: 'deny', 'data-key': `deny:${a.id}`, onclick: () => answer(a.id, false) }, `Deny ${a.name}`)))));
}

async function answer(id, approve) {
  try { await api('POST', `/api/approvals/${encodeURIComponent(id)}`, { approve }); } catch (err) { announce(err.message); }
}

// Tools and cost.

function drawTools() {
  S.toolsFor = S.agent;
  rebuild($('tools'), () => renderTools(S.agent, S.agents[S.agent]));
}

function drawCost() {
  const rows = S.usage.map((m) => h('tr', {},
    h('th', { scope: 'row', text: m.model }), h('td', { text: String(m.usage.requests) }),
    h('td', { text: String(m.usage.prompt_tokens) }), h('td', { text: String(m.usage.cached_tokens || 0) }),
    h('td', { text: String(m.usage.completion_tokens) }), h('td', { text: fmtCost(m.cost) })));
  const runs = [...S.runs.values()].reverse().map((r) => {
    const use = r.status === 'running' ? sumUsage([...r.steps.values()]) : r.usage;
    return h('tr', {}, h('th', { scope: 'row', text: r.id }), h('td', { text: r.status }),
      h('td', { text: String(use.prompt_tokens) }), h('td', { text: String(use.cached_tokens || 0) }),
      h('td', { text: String(use.completion_tokens) }), h('td', { text: S.priced ? fmtCost(r.cost) : 'no price given' }));
  });
  const head = (first, second) => h('thead', {}, h('tr', {}, [first, second, 'Prompt tokens', 'Cached', 'Completion tokens', 'Cost'].map((t) => h('th', { scope: 'col', text: t }))));
  rebuild($('cost'), () => [
    !S.priced && h('p', { class: 'hint', text: 'No prices were given (onion dev -price MODEL=IN,OUT in dollars per million tokens, or devui.Prices): tokens only.' }),
    h('table', { id: 'cost-models' }, h('caption', { text: 'By model' }), head('Model', 'Requests'), h('tbody', {}, rows)),
    h('table', { id: 'cost-runs' }, h('caption', { text: 'By run' }), head('Run', 'Status'), h('tbody', {}, runs)),
  ]);
}

// Tabs: arrow keys move between them, as a tab list's keyboard pattern has it.

function selectTab(name) {
  for (const tab of document.querySelectorAll('[role=tab]')) {
    const on = tab.id === `tab-${name}`;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    $(tab.getAttribute('aria-controls')).hidden = !on;
  }
  if (name === 'cost') mark('cost');
  if (name === 'tools') schedule();
}

function setupTabs() {
  const tabs = [...document.querySelectorAll('[role=tab]')];
  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => selectTab(tab.id.slice(4)));
    tab.addEventListener('keydown', (e) => {
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      const next = tabs[(to + tabs.length) % tabs.length];
      selectTab(next.id.slice(4));
      next.focus();
    });
  });
}

// Conversations: new, load, save, delete.

function setupConversations() {
  $('agent').addEventListener('change', (e) => { S.agent = Number(e.target.value); schedule(); });
  $('new-conv-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('conv-error').textContent = '';
    try {
      const c = await api('POST', '/api/conversations', { agent: S.agent });
      S.convs.set(c.id, c);
      selectConv(c.id);
      $('prompt').focus();
    } catch (err) { $('conv-error').textContent = err.message; }
  });
  $('load-conv').addEventListener('change', async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    $('conv-error').textContent = '';
    try {
      const history = JSON.parse(await file.text());
      const c = await api('POST', '/api/conversations', { agent: S.agent, title: file.name, history });
      S.convs.set(c.id, c);
      selectConv(c.id);
      announce(`Loaded ${file.name}`);
      $('prompt').focus();
    } catch (err) { $('conv-error').textContent = `${file.name}: ${err.message}`; }
    e.target.value = '';
  });
  $('save-conv').addEventListener('click', async () => {
    try {
      const res = await fetch(`/api/conversations/${encodeURIComponent(S.conv)}/history`, { headers: { 'X-Onion-Token': document.querySelector('meta[name="onion-token"]').content } });
      const text = await res.text();
      if (!res.ok) throw new Error(JSON.parse(text).error);
      $('saved-json').textContent = text;
      const link = $('save-link');
      if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href);
      link.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
      link.download = `conversation-${S.conv}.json`;
      $('saved').hidden = false;
      link.focus();
    } catch (err) { $('conv-error').textContent = err.message; }
  });
  $('delete-conv').addEventListener('click', async () => {
    try { await api('POST', `/api/conversations/${encodeURIComponent(S.conv)}/delete`, {}); } catch (err) { $('conv-error').textContent = err.message; }
  });
  $('prompt-form').addEventListener('submit', send);
  $('prompt').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); $('prompt-form').requestSubmit(); }
  });
  $('stop').addEventListener('click', () => {
    const cv = S.convs.get(S.conv);
    if (cv && cv.busy) stopRun(cv.busy);
  });
}

setupTabs();
setupConversations();
setupReplay();
connect();
