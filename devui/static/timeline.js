// The timeline of a run, live or replayed: each model request with its
// tokens, latency and stop reason, and each round of tool calls as the
// loop ran them: reads side by side, writes in sequence, a skipped write
// marked.

import { h, badge, fmtMS, fmtTokens, pretty, outcomeLabel } from './dom.js';

// renderTimeline returns the list of items. opts.key(step) names a
// model step's text for live updates; opts.json(step) returns a promise
// of {request, reply} (JSON values or texts); opts.open is the Set of
// steps whose JSON is shown, opts.cache the JSON already fetched.
export function renderTimeline(items, opts) {
  const list = h('ol', { class: 'timeline', 'aria-label': 'Model requests and tool calls, in order' });
  let round = null;
  for (const it of items) {
    if (!it) continue;
    if (it.kind === 'model') {
      round = null;
      list.append(modelItem(it, opts));
      continue;
    }
    const key = `${(it.agents || []).join('/')}|${it.iteration}`;
    if (!round || round.key !== key) {
      round = newRound(key, it);
      list.append(round.el);
    }
    round.add(it);
  }
  return list;
}

function newRound(key, first) {
  const reads = h('ul', { class: 'side-by-side', 'aria-label': 'Reads: they ran side by side' });
  const writes = h('ol', { class: 'in-sequence', 'aria-label': 'Writes: they ran one after another, in this order' });
  const others = h('ol', { class: 'in-sequence', 'aria-label': 'Calls as recorded: their intents are not in the recording' });
  const title = h('h3');
  const readNote = h('p', { class: 'label', text: 'Reads, run side by side:' });
  const writeNote = h('p', { class: 'label', text: 'Writes, run in sequence:' });
  const otherNote = h('p', { class: 'label', text: 'Calls, in the order the model asked for them:' });
  const el = h('li', { class: 'round', 'data-iteration': first.iteration }, title, readNote, reads, writeNote, writes, otherNote, others);
  let nr = 0, nw = 0, no = 0, skipped = 0;
  const update = () => {
    const by = first.agents && first.agents.length ? ` (by ${first.agents.join(' → ')})` : '';
    let t = `Round ${first.iteration} of tool calls${by}: `;
    const parts = [];
    if (nr) parts.push(`${nr} read${nr > 1 ? 's' : ''} side by side`);
    if (nw) parts.push(`${nw} write${nw > 1 ? 's' : ''} in sequence`);
    if (no) parts.push(`${no} call${no > 1 ? 's' : ''}`);
    if (skipped) parts.push(`${skipped} skipped`);
    title.textContent = t + parts.join(', ');
    readNote.hidden = reads.hidden = nr === 0;
    writeNote.hidden = writes.hidden = nw === 0;
    otherNote.hidden = others.hidden = no === 0;
  };
  return {
    key, el,
    add(it) {
      if (it.intent === 'read') { reads.append(toolItem(it)); nr++; } else if (it.intent === 'recorded') { others.append(toolItem(it)); no++; } else { writes.append(toolItem(it)); nw++; }
      if (it.outcome === 'skipped') skipped++;
      update();
    },
  };
}

function toolItem(it) {
  const facts = [];
  if (it.outcome) {
    facts.push(`${it.attempts} attempt${it.attempts === 1 ? '' : 's'}`);
    if (it.duration_ms !== undefined) facts.push(fmtMS(it.duration_ms));
    if (it.approval_wait_ms) facts.push(`${fmtMS(it.approval_wait_ms)} of it waiting for approval`);
  }
  const approval = { waiting: 'waiting for approval', approved: 'approved', denied: 'denied by you', auto: 'approved ahead (-approve)' }[it.approval];
  const status = it.outcome ? badge(outcomeLabel(it.outcome), 'outcome') : badge(it.status || 'running', 'running');
  return h('li', {
    class: `item tool outcome-${it.outcome || 'pending'}`, 'data-call-id': it.id, 'data-outcome': it.outcome || '',
    'data-approval': it.approval || '',
  },
  h('div', { class: 'line' },
    h('span', { class: 'name', text: it.name }), badge(it.intent || 'unknown tool', 'intent'), status,
    approval && badge(approval, 'approval'), h('span', { class: 'facts', text: facts.join(' · ') })),
  it.outcome === 'skipped' && h('p', { class: 'facts', text: 'Skipped: it did not run.' }),
  h('p', { class: 'label', text: 'Arguments' }),
  h('pre', { class: 'args', text: it.arguments }),
  it.outcome && [h('p', { class: 'label', text: 'Output, as the model read it' }), h('pre', { class: 'output', text: it.output })],
  it.error && h('p', { class: 'error call-error', text: `Error: ${it.error}` }));
}

function modelItem(it, opts) {
  const facts = [];
  if (it.model) facts.push(it.model);
  if (it.status === 'done') facts.push(fmtTokens(it.usage));
  if (it.latency_ms) facts.push(fmtMS(it.latency_ms));
  if (it.finish_reason) facts.push(`stop reason: ${it.finish_reason}`);
  if (it.tool_calls) facts.push(`${it.tool_calls} tool call${it.tool_calls > 1 ? 's' : ''} asked for`);
  if (it.retries) facts.push(`${it.retries} retr${it.retries > 1 ? 'ies' : 'y'}`);
  const label = { waiting: 'waiting for the reply', done: 'replied', failed: 'failed' }[it.status] || it.status;
  const el = h('li', { class: 'item model', 'data-step': it.step },
    h('div', { class: 'line' },
      h('span', { class: 'name', text: `Model request ${it.step}` }),
      it.agent && h('span', { class: 'facts', text: `by ${it.agent.split('/').join(' → ')}` }),
      badge(label, it.status === 'waiting' ? 'waiting' : it.status),
      h('span', { class: 'facts', text: facts.join(' · ') })),
    it.error && h('p', { class: 'error', text: it.error }),
    h('p', { class: 'text', 'data-text-for': opts.key ? opts.key(it.step) : undefined, text: it.text || '' }));
  if (opts.json && it.json !== 'dropped') el.append(...jsonToggle(it, opts));
  if (it.json === 'dropped') el.append(h('p', { class: 'facts', text: 'JSON not kept (the run passed the memory bound).' }));
  return el;
}

function jsonToggle(it, opts) {
  const id = `${opts.prefix}-${it.step}`;
  const open = opts.open.has(id);
  const req = h('pre', { class: 'json-request', tabindex: 0, 'aria-label': `The JSON of request ${it.step}` });
  const rep = h('pre', { class: 'json-reply', tabindex: 0, 'aria-label': `The JSON of reply ${it.step}` });
  const wireReq = h('pre', { class: 'wire-request', tabindex: 0, 'aria-label': `The body of request ${it.step} on the wire` });
  const wireRep = h('pre', { class: 'wire-reply', tabindex: 0, 'aria-label': `The body of reply ${it.step} on the wire` });
  const wire = h('div', { hidden: true },
    h('p', { class: 'label', text: 'Request, on the wire' }), wireReq, h('p', { class: 'label', text: 'Reply, on the wire' }), wireRep);
  const box = h('div', { class: 'json', id, hidden: !open },
    h('p', { class: 'label', text: 'Request, as onion sent it to the model' }), req,
    h('p', { class: 'label', text: 'Reply, as the model gave it back' }), rep, wire);
  const fill = (j) => {
    req.textContent = j.request === null ? '(none)' : pretty(j.request);
    rep.textContent = j.reply === null ? '(none yet)' : pretty(j.reply);
    wire.hidden = !j.wire_request;
    if (j.wire_request) {
      wireReq.textContent = pretty(j.wire_request);
      wireRep.textContent = j.wire_reply ? pretty(j.wire_reply) : '(none yet)';
    }
  };
  const load = () => {
    const cached = opts.cache.get(id);
    if (cached && (cached.reply !== null || it.status === 'waiting')) { fill(cached); return; }
    req.textContent = 'Loading…';
    opts.json(it.step).then((j) => { opts.cache.set(id, j); fill(j); }, (e) => { req.textContent = `Could not load it: ${e.message}`; });
  };
  if (open) load();
  const btn = h('button', {
    type: 'button', class: 'show-json', 'aria-expanded': String(open), 'aria-controls': id, 'data-key': `json:${id}`,
    text: open ? 'Hide the JSON' : 'Show the JSON',
    onclick: () => {
      const now = box.hidden;
      box.hidden = !now;
      btn.setAttribute('aria-expanded', String(now));
      btn.textContent = now ? 'Hide the JSON' : 'Show the JSON';
      if (now) { opts.open.add(id); load(); } else opts.open.delete(id);
    },
  });
  return [btn, box];
}
