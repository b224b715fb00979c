// The tools as the model sees them, and a form built from each tool's
// JSON Schema that calls the tool directly, without a model: what
// Tool.Call returns is what the form shows.

import { h, api, badge, fmtMS, outcomeLabel } from './dom.js';

let nextID = 0;

// renderTools lists the tools of the agent at index, a view the
// snapshot holds ({name, tools}).
export function renderTools(index, agent) {
  if (!agent) return h('p', { class: 'hint', text: 'No agent is served.' });
  if (!agent.tools.length) return h('p', { class: 'hint', text: `The agent ${agent.name} has no tools.` });
  return agent.tools.map((t) => toolCard(index, t));
}

function toolCard(agent, t) {
  let schema = {};
  try { schema = typeof t.schema === 'string' ? JSON.parse(t.schema) : (t.schema || {}); } catch { schema = {}; }
  const fields = fieldsOf(schema);
  const result = h('div', { class: 'result', role: 'status', 'aria-live': 'polite' });
  const rawBox = h('textarea', { name: '__json', rows: 4, class: 'mono', hidden: true, 'aria-label': `The arguments of ${t.name}, as JSON` });
  const rawCheck = h('input', {
    type: 'checkbox', name: '__raw', id: `f${++nextID}`,
    onchange: () => {
      rawBox.hidden = !rawCheck.checked;
      if (rawCheck.checked) {
        try { rawBox.value = JSON.stringify(JSON.parse(collect(fields)), null, 2); } catch { rawBox.value = '{}'; }
        rawBox.focus();
      }
    },
  });
  const approve = t.approval === 'required'
    ? h('input', { type: 'checkbox', name: '__approve', id: `f${++nextID}` }) : null;
  const form = h('form', {
    'aria-label': `Call ${t.name}`,
    onsubmit: async (e) => {
      e.preventDefault();
      let args;
      try { args = rawCheck.checked ? rawBox.value : collect(fields); } catch (err) {
        result.replaceChildren(h('p', { class: 'error', text: err.message }));
        return;
      }
      const btn = form.querySelector('button[type=submit]');
      btn.disabled = true;
      result.replaceChildren(h('p', { class: 'hint', text: `Calling ${t.name}…` }));
      try {
        const r = await api('POST', '/api/tools/call', { agent, tool: t.name, arguments: args, approve: !!(approve && approve.checked) });
        result.replaceChildren(...[
          h('p', {}, badge(outcomeLabel(r.outcome), `outcome ${r.outcome}`), ` in ${fmtMS(r.duration_ms)}`),
          h('p', { class: 'label', text: 'What the model would read' }),
          h('pre', { class: 'call-output', 'data-outcome': r.outcome, text: r.output }),
          r.error && h('p', { class: 'error call-error', text: `Error: ${r.error}` })].filter(Boolean));
      } catch (err) {
        result.replaceChildren(h('p', { class: 'error', text: err.message }));
      } finally { btn.disabled = false; }
    },
  },
  fields.map((f) => f.wrap),
  fields.length === 0 && h('p', { class: 'hint', text: 'It takes no arguments.' }),
  h('div', { class: 'field check' }, rawCheck, h('label', { for: rawCheck.id, text: 'Write the arguments as JSON myself' })),
  rawBox,
  approve && h('div', { class: 'field check' }, approve, h('label', { for: approve.id, text: 'Approve this call: the tool needs approval to run' })),
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', 'data-key': `call:${t.name}`, text: `Call ${t.name}` })),
  result);
  const facts = [t.intent || 'write', `approval ${t.approval || 'none'}`];
  if (t.strict) facts.push('strict');
  return h('details', { class: 'tool-card', 'data-tool': t.name },
    h('summary', {}, h('span', { class: 'name', text: t.name }), ' ', h('span', { class: 'facts', text: `(${facts.join(', ')})` })),
    h('p', { class: 'description', text: t.description || '(no description)' }),
    t.signature && [h('p', { class: 'label', text: 'Go signature' }), h('pre', { text: t.signature })],
    h('p', { class: 'label', text: 'Parameters, as the JSON Schema sent to the model' }),
    h('pre', { class: 'schema', text: JSON.stringify(schema, null, 2) }),
    form);
}

// typeOf is a property's JSON type: the first that is not null.
function typeOf(p) {
  const t = Array.isArray(p.type) ? p.type.find((x) => x !== 'null') : p.type;
  if (Array.isArray(p.enum)) return 'enum';
  return t || 'json';
}

// fieldsOf makes an input for each property of an object schema.
function fieldsOf(schema) {
  const props = (schema && schema.properties) || {};
  const required = new Set(schema.required || []);
  return Object.entries(props).map(([name, p]) => {
    p = p || {};
    const kind = typeOf(p);
    const id = `f${++nextID}`;
    const req = required.has(name);
    const labelText = `${name}${req ? ' (required)' : ''}`;
    const desc = [p.description, kind === 'json' || kind === 'array' || kind === 'object' ? 'as JSON' : '', p.format ? `format ${p.format}` : '']
      .filter(Boolean).join(' · ');
    let el;
    switch (kind) {
      case 'boolean':
        el = h('input', { type: 'checkbox', id, name });
        return { name, kind, req, el, wrap: h('div', { class: 'field check' }, el, h('label', { for: id, text: labelText }), desc && h('span', { class: 'desc', text: desc })) };
      case 'enum':
        el = h('select', { id, name }, !req && h('option', { value: '', text: '(not given)' }),
          p.enum.map((v) => h('option', { value: JSON.stringify(v), text: String(v) })));
        break;
      case 'integer': case 'number':
        el = h('input', { type: 'number', id, name, step: kind === 'integer' ? '1' : 'any', min: p.minimum, max: p.maximum });
        break;
      case 'string':
        el = (p.maxLength || 0) > 200 || /text|content|body|code|command/i.test(name)
          ? h('textarea', { id, name, rows: 3 }) : h('input', { type: 'text', id, name });
        break;
      default:
        el = h('textarea', { id, name, rows: 3, class: 'mono', placeholder: kind === 'array' ? '[ ]' : '{ }' });
    }
    if (req) el.setAttribute('aria-required', 'true');
    return { name, kind, req, el, wrap: h('div', { class: 'field' }, h('label', { for: id, text: labelText }), desc && h('span', { class: 'desc', text: desc }), el) };
  });
}

// collect returns the arguments the fields hold, as JSON text.
function collect(fields) {
  const args = {};
  for (const f of fields) {
    if (f.kind === 'boolean') {
      if (f.el.checked || f.req) args[f.name] = f.el.checked;
      continue;
    }
    const v = f.el.value;
    if (v === '' && !f.req) continue;
    switch (f.kind) {
      case 'enum': args[f.name] = v === '' ? '' : JSON.parse(v); break;
      case 'integer': case 'number': {
        const n = Number(v);
        if (v === '' || Number.isNaN(n)) throw new Error(`${f.name}: give a number`);
        args[f.name] = n;
        break;
      }
      case 'string': args[f.name] = v; break;
      default:
        try { args[f.name] = JSON.parse(v); } catch (e) { throw new Error(`${f.name}: not JSON: ${e.message}`); }
    }
  }
  return JSON.stringify(args);
}
