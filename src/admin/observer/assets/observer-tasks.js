// The observer page's task list: a queue's recent tasks (GET /tasks/queues/<q>/tasks), each with
// the operations its state allows (the task lifecycle): Retry a dead letter or a retryable failure
// now, Cancel a waiting or in-flight one; and the queue's
// Redrive DLQ (posted by observer-actions.js). Each posts with the token; the list is read again after one is done.
'use strict';
(() => {
  const { esc, num, authHeaders, put, table, post } = window.Molo;
  const enc = encodeURIComponent;
  const OPERATIONS = { queued: ['cancel'], leased: ['cancel'], running: ['cancel'], 'failed-retryable': ['retry', 'cancel'], 'dead-lettered': ['retry'] };
  let shown;

  async function load(queue) {
    shown = queue;
    const response = await fetch(`/tasks/queues/${enc(queue)}/tasks?limit=50`, { headers: authHeaders() }).catch(() => undefined);
    const answer = response === undefined ? {} : await response.json().catch(() => ({}));
    if (response?.ok !== true) return put('task-list', `<p class="empty">tasks of ${esc(queue)}: ${esc(response?.status ?? 'unreachable')} ${esc(answer.error?.code ?? '')}</p>`);
    const rows = (answer.tasks ?? []).map((t) => {
      const { state, envelope } = t;
      const button = (OPERATIONS[state] ?? []).map((op) => `<button data-task-op="${op}" data-task-id="${esc(envelope.id)}">${op === 'retry' ? 'Retry' : 'Cancel'}</button>`).join(' ');
      const attempts = `${num(envelope.attempts)}/${num(envelope.max_retries + 1)}`;
      return `<tr data-task-row="${esc(envelope.id)}"><td>${esc(envelope.id)}</td><td>${esc(envelope.name)}</td><td class="task-state">${esc(state)}</td><td class="num">${attempts}</td><td>${button}</td></tr>`;
    });
    put('task-list', `<h3>Tasks of ${esc(queue)} <button data-task="redrive" data-queue="${esc(queue)}">Redrive DLQ</button></h3>` + table(['id', 'name', 'state', { label: 'attempts', num: true }, ''], rows, 'no tasks'));
  }

  document.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    if (button === null) return;
    const d = button.dataset;
    if (d.tasksView !== undefined) return void load(d.tasksView);
    if (d.taskOp !== undefined) {
      void post(`/tasks/${enc(d.taskId)}/${d.taskOp}`, {}, `${d.taskOp} task ${d.taskId}`).then((ok) => ok && shown !== undefined && load(shown));
    }
  });

  window.Molo.hooks.tasksChanged = () => shown !== undefined && load(shown);
})();
