// The observer page's operator buttons: one click handler for every `data-*` button the views draw.
// Each action posts with the token (Molo.post); a destructive one (purge) is confirmed first, one
// that needs a figure (scale, seek) asks for it with a prompt, and a cancelled prompt sends nothing.
'use strict';
(() => {
  const { post, hooks } = window.Molo;
  const enc = encodeURIComponent;

  /** The seek body for what the operator typed: first, new, a sequence number or a date. */
  function seekPosition(text) {
    const value = text.trim();
    if (value === 'first' || value === 'new') return { to: value };
    if (/^\d+$/.test(value)) return { seq: Number(value) };
    return { time: value };
  }

  async function scale(d) {
    const answer = window.prompt(`Scale ${d.path} on ${d.node} to how many ${d.kind === 'task-pool' ? 'tasks at once' : 'children'}?`, d.count ?? '');
    if (answer === null || answer.trim() === '') return;
    const count = Number(answer.trim());
    await post('/actions/group/scale', { node: d.node, path: d.path, count: Number.isInteger(count) ? count : answer }, `scale ${d.path} on ${d.node} to ${answer.trim()}`);
  }

  async function purge(stream) {
    if (!window.confirm(`Purge every message of stream ${stream}? Its consumers keep their positions; the messages are gone.`)) return;
    if (await post(`/streams/${enc(stream)}/purge`, {}, `purge ${stream}`)) hooks.streamsChanged?.(stream);
  }

  async function seek(stream, consumer) {
    const answer = window.prompt(`Move consumer ${consumer} of ${stream} to: first, new, a sequence number, or a date (ISO 8601)`, 'first');
    if (answer === null || answer.trim() === '') return;
    if (await post(`/streams/${enc(stream)}/consumers/${enc(consumer)}/seek`, seekPosition(answer), `seek ${consumer} on ${stream} to ${answer.trim()}`)) hooks.streamsChanged?.(stream);
  }

  document.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    if (button === null) return;
    const d = button.dataset;
    if (d.view !== undefined) return void hooks.viewStream?.(d.view);
    if (d.purge !== undefined) return void purge(d.purge);
    if (d.seekConsumer !== undefined) return void seek(d.seekStream, d.seekConsumer);
    if (d.scale !== undefined) return void scale(d);
    if (d.task !== undefined) return void post(`/tasks/queues/${enc(d.queue)}/${d.task}`, {}, `${d.task} ${d.queue}`).then((ok) => ok && hooks.tasksChanged?.());
    if (d.act === undefined) return;
    const body = { node: d.node, path: d.path, ...(d.program === undefined ? {} : { program: d.program }) };
    void post(`/actions/${d.act}`, body, `${d.act.replace('/', ' ')} ${d.program ?? d.path} on ${d.node}`);
  });
})();
