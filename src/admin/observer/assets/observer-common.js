// The observer page's shared helpers (loaded first): escaping, tables that keep their buttons under
// the pointer, the token kept in sessionStorage, and posting an operator action.
'use strict';
(() => {
  const TOKEN_KEY = 'molo.admin.token';
  const $ = (id) => document.getElementById(id);
  const esc = (value) => String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  const num = (value) => (value === null || value === undefined ? '—' : typeof value === 'number' ? String(Math.round(value * 100) / 100) : esc(value));
  const token = () => sessionStorage.getItem(TOKEN_KEY) ?? '';
  const authHeaders = () => (token() === '' ? {} : { authorization: `Bearer ${token()}` });

  // A section is rewritten only when its markup changed, and then row by row where its shape is
  // the same: a button stays the same element under the pointer while counters around it move.
  const rendered = new Map();
  const shapeOf = (html) => html.replace(/<tr[\s\S]*?<\/tr>/g, '<tr>');
  function put(id, html) {
    const before = rendered.get(id);
    if (before === html) return;
    rendered.set(id, html);
    const element = $(id);
    if (before === undefined || shapeOf(before) !== shapeOf(html)) {
      element.innerHTML = html;
      return;
    }
    const next = document.createElement('template');
    next.innerHTML = html;
    const fresh = next.content.querySelectorAll('tr');
    element.querySelectorAll('tr').forEach((row, i) => {
      if (row.outerHTML !== fresh[i].outerHTML) row.replaceWith(fresh[i]);
    });
  }

  function table(head, rows, empty) {
    if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
    const th = head.map((h) => `<th${h.num ? ' class="num"' : ''}>${esc(h.label ?? h)}</th>`).join('');
    return `<table><thead><tr>${th}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
  }

  /** Posts an action with the token; the outcome goes to #action-result. Resolves with whether it was done. */
  async function post(url, body, label) {
    const result = $('action-result');
    result.className = '';
    result.textContent = `${label}…`;
    let response;
    try {
      response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders() }, body: JSON.stringify(body) });
    } catch (error) {
      result.className = 'refused';
      result.textContent = `${label}: unreachable (${error.message})`;
      return false;
    }
    const answer = await response.json().catch(() => ({}));
    if (response.ok) {
      result.textContent = `${label}: done`;
      return true;
    }
    result.className = 'refused';
    result.textContent = `${label}: refused, ${response.status} ${answer.error?.code ?? ''} ${answer.error?.message ?? ''}`.trim();
    return false;
  }

  // `panels`: renderers of extra sections, each called with every frame; `hooks`: what observer.js lends the other scripts.
  window.Molo = { TOKEN_KEY, $, esc, num, token, authHeaders, put, table, post, panels: [], hooks: {} };
})();
