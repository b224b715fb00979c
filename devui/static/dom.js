// Small helpers shared by the page's modules. Everything a model, a tool
// or a recording wrote reaches the page as text: h() only ever makes text
// nodes of strings, never markup.

export const token = document.querySelector('meta[name="onion-token"]').content;

export const $ = (id) => document.getElementById(id);

// h makes an element: props set attributes (data-*, aria-*), properties
// (booleans such as hidden or checked), text, class and on* listeners;
// kids are elements or strings (as text), arrays flattened, null skipped.
export function h(tag, props = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (typeof v === 'boolean' && k in el) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false || kid === '') continue;
    el.append(kid instanceof Node ? kid : String(kid));
  }
  return el;
}

// api calls the UI with the page's token, and returns the reply's JSON
// or throws its error.
export async function api(method, path, body, { raw = false } = {}) {
  const init = { method, headers: { 'X-Onion-Token': token } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = raw ? body : JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!res.ok) throw new Error((data && data.error) || `${res.status} ${res.statusText}`);
  return data;
}

// rebuild replaces the children of container with what build returns,
// keeping the focus on the element with the same data-key, if any.
export function rebuild(container, build) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.key : undefined;
  const top = container.scrollTop;
  container.replaceChildren(...[build()].flat().filter(Boolean));
  container.scrollTop = top;
  if (key) {
    const el = container.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (el) el.focus({ preventScroll: true });
  }
}

export function badge(text, cls = '') {
  return h('span', { class: `badge ${cls}`, text });
}

export function fmtMS(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

export function fmtTokens(u) {
  if (!u) return '';
  let s = `${u.prompt_tokens} in`;
  if (u.cached_tokens) s += ` (${u.cached_tokens} cached)`;
  s += ` · ${u.completion_tokens} out`;
  return s + ' tokens';
}

export function fmtCost(c) {
  if (c === undefined || c === null) return 'no price given';
  return `$${c < 0.01 ? c.toFixed(6) : c.toFixed(4)}`;
}

// pretty indents JSON text, or returns what is not JSON as it is.
export function pretty(text) {
  if (typeof text !== 'string') return JSON.stringify(text, null, 2);
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

const outcomes = {
  succeeded: '✓ succeeded', failed: '✗ failed', denied: '✗ denied',
  skipped: '⤼ skipped', outcome_unknown: '? outcome unknown',
};
export const outcomeLabel = (o) => outcomes[o] || o;
