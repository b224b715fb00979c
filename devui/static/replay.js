// Replay: a recording that oniontest.Record wrote, stepped through as if
// it ran. The UI reads the file into steps (one per exchange: a model
// request and its reply, the calls it asked for, their outputs as the
// next request carried them); nothing runs.

import { $, h, api, rebuild } from './dom.js';
import { renderTimeline } from './timeline.js';

let rec = null; // the replay the UI read
let pos = 0; // how many steps are shown
const open = new Set();
const cache = new Map();

export function setupReplay() {
  $('replay-file').addEventListener('change', async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    $('replay-error').textContent = '';
    try {
      const text = await file.text();
      rec = await api('POST', `/api/replays?name=${encodeURIComponent(file.name)}`, text, { raw: true });
      pos = 0;
      open.clear();
      cache.clear();
      $('replay-controls').hidden = false;
      render();
      $('replay-step').focus();
    } catch (err) {
      $('replay-error').textContent = err.message;
    }
  });
  const go = (to) => () => { if (!rec) return; pos = Math.max(0, Math.min(rec.steps.length, to())); render(); };
  $('replay-first').addEventListener('click', go(() => 0));
  $('replay-back').addEventListener('click', go(() => pos - 1));
  $('replay-step').addEventListener('click', go(() => pos + 1));
  $('replay-end').addEventListener('click', go(() => rec.steps.length));
}

// items are the timeline of the first pos steps.
function items() {
  const out = [];
  const calls = new Map(); // call ID → its item, to take its output later
  for (let i = 0; i < pos; i++) {
    const st = rec.steps[i];
    for (const r of st.results) {
      const it = calls.get(r.call_id);
      if (it) Object.assign(it, { output: r.output, outcome: r.outcome, status: 'done', attempts: r.outcome === 'denied' || r.outcome === 'skipped' ? 0 : 1 });
    }
    out.push({
      kind: 'model', step: st.step, model: st.model, status: st.error ? 'failed' : 'done', usage: st.usage,
      finish_reason: st.finish_reason, text: st.text, error: st.error, tool_calls: st.tool_calls.length, json: 'kept',
    });
    for (const c of st.tool_calls) {
      const it = { kind: 'tool', id: c.id, name: c.name, arguments: c.arguments, iteration: i + 1, intent: 'recorded', status: 'waiting for the next step' };
      calls.set(c.id, it);
      out.push(it);
    }
  }
  return out;
}

function render() {
  const n = rec.steps.length;
  $('replay-pos').textContent = `Step ${pos} of ${n}${pos === n ? ': the end of the recording' : ''}`;
  $('replay-first').disabled = $('replay-back').disabled = pos === 0;
  $('replay-step').disabled = $('replay-end').disabled = pos === n;
  rebuild($('replay-view'), () => [
    h('h3', { text: rec.name }),
    h('p', { class: 'hint', text: 'Tools in a recording show as “recorded”: their intent is not in the file. Nothing runs.' }),
    h('div', { class: 'turn user' }, h('span', { class: 'who', text: 'Prompt' }), h('p', { class: 'answer replay-prompt', text: rec.prompt })),
    renderTimeline(items(), {
      prefix: 'replay', open, cache,
      json: (step) => Promise.resolve({ request: rec.steps[step - 1].request, reply: rec.steps[step - 1].reply }),
    }),
    pos === n && rec.answer && h('div', { class: 'turn assistant' }, h('span', { class: 'who', text: 'Answer' }), h('p', { class: 'answer replay-answer', text: rec.answer })),
  ]);
}
