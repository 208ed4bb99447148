// The Molo observer page: follows /events (Server-Sent Events read with fetch, so that the bearer
// token can be sent: EventSource cannot send headers), draws what each frame says, and posts
// operator actions (observer-actions.js). Plain browser JavaScript, no build step; uPlot is loaded
// beside it, the helpers (observer-common.js) and the extra panels (observer-panels.js) before it.
'use strict';
(() => {
  const { TOKEN_KEY, $, esc, num, token, authHeaders, put, table, panels, hooks } = window.Molo;
  const MAX_POINTS = 3600;

  let controller;
  let retryTimer;
  const series = { t: [], messages: [], restarts: [], tasks: [], depth: [], lag: [], replication: [] };
  let rateChart;
  let depthChart;
  let lastFrame;

  const setStatus = (text) => ($('status').textContent = text);

  function showLogin(message) {
    $('login').hidden = false;
    $('main').hidden = true;
    $('forget').hidden = true;
    $('login-error').textContent = message ?? '';
    $('token').focus();
  }

  // One stream at a time; on its end, another after the server's retry interval.
  async function connect() {
    clearTimeout(retryTimer);
    controller?.abort();
    controller = new AbortController();
    setStatus('connecting…');
    let response;
    try {
      response = await fetch('/events', { headers: { accept: 'text/event-stream', ...authHeaders() }, signal: controller.signal, cache: 'no-store' });
    } catch (error) {
      if (error.name !== 'AbortError') retry('unreachable');
      return;
    }
    if (response.status === 401) {
      setStatus('token needed');
      showLogin(token() === '' ? '' : 'That token was refused (401).');
      return;
    }
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      retry(`${response.status} ${body.error?.code ?? ''}`.trim());
      return;
    }
    $('login').hidden = true;
    $('main').hidden = false;
    $('forget').hidden = token() === '';
    setStatus('live');
    void loadStreams();
    try {
      await readEvents(response.body, onEvent);
      retry('stream ended');
    } catch (error) {
      if (error.name !== 'AbortError') retry('stream broken');
    }
  }

  function retry(reason) {
    setStatus(`reconnecting (${reason})…`);
    retryTimer = setTimeout(connect, 2000);
  }

  async function readEvents(body, handle) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (data !== '') handle(event, JSON.parse(data));
      }
    }
  }

  function onEvent(event, data) {
    if (event === 'history') {
      for (const key of Object.keys(series)) series[key].length = 0;
      for (const sample of data) addSample(sample);
      drawCharts();
    } else if (event === 'problem') {
      setStatus(`look failed: ${data.code}`);
    } else if (event === 'frame') {
      setStatus('live');
      lastFrame = data;
      addSample(data.sample);
      render(data);
      drawCharts();
    }
  }

  function addSample(sample) {
    series.t.push(sample.at / 1000);
    series.messages.push(sample.messagesPerSec);
    series.restarts.push(sample.restartsPerSec);
    series.tasks.push(sample.tasksPerSec);
    series.depth.push(sample.queueDepth);
    series.lag.push(sample.consumerLag);
    series.replication.push(sample.replicationLag ?? null);
    if (series.t.length > MAX_POINTS) for (const key of Object.keys(series)) series[key].shift();
  }

  function drawCharts() {
    if (typeof uPlot === 'undefined') return;
    const width = Math.max(360, ($('chart-rates').clientWidth || 480) - 8);
    if (rateChart === undefined) {
      const base = { width, height: 180, scales: { x: { time: true } } };
      rateChart = new uPlot({ ...base, title: 'Rates (per second)', series: [{}, { label: 'messages', stroke: '#2b6cb0' }, { label: 'restarts', stroke: '#c53030' }, { label: 'tasks', stroke: '#1f8a4c' }] }, [[], [], [], []], $('chart-rates'));
      depthChart = new uPlot({ ...base, title: 'Queue depth and consumer lag', series: [{}, { label: 'queue depth', stroke: '#b7791f' }, { label: 'consumer lag', stroke: '#6b46c1' }] }, [[], [], []], $('chart-depth'));
    }
    rateChart.setData([series.t, series.messages, series.restarts, series.tasks]);
    depthChart.setData([series.t, series.depth, series.lag]);
    hooks.drawReplication?.(series.t, series.replication);
  }

  function render(frame) {
    $('node').textContent = `served by ${frame.node}`;
    renderNodes(frame);
    renderTrees(frame);
    renderPrograms(frame);
    renderQueues(frame);
    renderStreams(frame);
    for (const panel of panels) panel(frame);
  }

  function renderNodes(frame) {
    const links = frame.links ?? [{ name: frame.node, state: 'self', rttMs: 0, queuedBytes: 0 }];
    const rows = links.map((l) => `<tr data-node="${esc(l.name)}"><td>${esc(l.name)}</td><td class="state-${esc(l.state)}">${esc(l.state)}${l.downReason ? ` (${esc(l.downReason)})` : ''}</td><td class="num">${l.rttMs === null ? '—' : `${num(l.rttMs)} ms`}</td><td class="num">${num(l.queuedBytes)}</td></tr>`);
    put('nodes-view', table(['node', 'state', { label: 'RTT', num: true }, { label: 'queued bytes', num: true }], rows, 'no nodes'));
  }

  function renderTrees(frame) {
    const filter = $('tree-filter').value.trim().toLowerCase();
    const parts = frame.trees.map((tree) => {
      if (tree.error !== undefined && tree.root === undefined) return `<h3>${esc(tree.node)}</h3><p class="error">${esc(tree.error.code)}: ${esc(tree.error.message)}</p>`;
      const rows = [];
      if (tree.root !== null) collectRows(tree.node, tree.root, 0, rows, filter, tree.sections ?? {});
      const note = tree.truncated ? `<p class="error">truncated: ${num(tree.omitted)} children left out</p>` : '';
      return `<div class="tree" data-node="${esc(tree.node)}"><h3>${esc(tree.node)}</h3>${note}${table(
        ['path', 'state', { label: 'restarts', num: true }, { label: 'intensity left', num: true }, { label: 'mailbox', num: true }, { label: 'handled', num: true }, 'behaviour', 'ref', ''],
        rows,
        tree.root === null ? 'no root supervisor yet' : 'nothing matches the filter',
      )}</div>`;
    });
    put('trees-view', parts.join(''));
  }

  // A simple_one_for_one group scales by its children; a task pool (its fetcher's row) by its concurrency.
  function scaleButton(item, target, sections) {
    if (item.supervisor?.strategy === 'simple_one_for_one') return ` <button data-scale data-kind="group" data-count="${esc(item.children?.length)}" ${target}>Scale</button>`;
    if (item.section !== 'tasks') return '';
    const pool = (sections.tasks ?? []).find((entry) => entry.path === item.path)?.value;
    return ` <button data-scale data-kind="task-pool" data-count="${esc(pool?.concurrency)}" ${target}>Scale</button>`;
  }

  function collectRows(node, item, depth, rows, filter, sections) {
    const behaviour = item.process?.behaviour ?? '';
    const matches = filter === '' || item.path.toLowerCase().includes(filter) || behaviour.toLowerCase().includes(filter);
    if (matches) {
      const sup = item.supervisor;
      const mailbox = item.process === null ? '—' : `${item.process.mailboxLength}/${item.process.mailboxCapacity}`;
      const label = depth === 0 ? 'root' : item.id ?? item.ref ?? '?';
      const target = `data-node="${esc(node)}" data-path="${esc(item.path)}"`;
      const actions =
        (depth === 0
          ? ''
          : `${item.id === null ? '' : `<button data-act="child/restart" ${target}>Restart</button> `}<button data-act="child/terminate" ${target}>Terminate</button>`) + scaleButton(item, target, sections);
      rows.push(
        `<tr data-node="${esc(node)}" data-path="${esc(item.path)}"><td style="padding-left:${0.5 + depth * 1.2}rem" title="${esc(item.path)}">${esc(label)}${item.type === 'supervisor' ? ' ▾' : ''}</td>` +
          `<td class="state state-${esc(item.state)}">${esc(item.state)}</td><td class="num restarts">${num(item.restartCount)}</td>` +
          `<td class="num">${sup === undefined ? '' : `${num(sup.remainingIntensity)}/${num(sup.intensity)}`}</td><td class="num">${mailbox}</td>` +
          `<td class="num">${num(item.process?.messagesHandled)}</td><td>${esc(behaviour)}${item.error ? ` <span class="error">${esc(item.error.code)}</span>` : ''}</td><td class="ref">${esc(item.ref ?? '')}</td><td>${actions}</td></tr>`,
      );
    }
    for (const child of item.children ?? []) collectRows(node, child, depth + 1, rows, filter, sections);
  }

  function renderPrograms(frame) {
    const rows = [];
    for (const tree of frame.trees) {
      for (const entry of tree.sections?.programs ?? []) {
        for (const p of entry.value?.programs ?? []) {
          const attrs = `data-node="${esc(tree.node)}" data-path="${esc(entry.path)}" data-program="${esc(p.name)}"`;
          const buttons = ['start', 'stop', 'restart'].map((a) => `<button data-act="program/${a}" ${attrs}>${a[0].toUpperCase()}${a.slice(1)}</button>`).join(' ');
          const exit = p.lastExit === undefined ? '' : esc(JSON.stringify(p.lastExit).slice(0, 80));
          rows.push(`<tr ${attrs}><td>${esc(tree.node)}</td><td>${esc(p.name)}</td><td class="state-${esc(p.state)}">${esc(p.state)}</td><td class="num">${num(p.pid)}</td><td class="num">${num(p.restartsInWindow)}/${num(p.maxRestarts)}</td><td class="num">${num(p.totalRestarts)}</td><td>${esc(p.health)}</td><td>${exit}</td><td>${buttons}</td></tr>`);
        }
      }
    }
    put('programs-view', table(['node', 'program', 'state', { label: 'pid', num: true }, { label: 'budget used', num: true }, { label: 'restarts', num: true }, 'health', 'last exit', ''], rows, 'no program supervisors'));
  }

  function renderQueues(frame) {
    if (frame.queues === null) return put('queues-view', '<p class="empty">this surface has no task queue</p>');
    const states = ['queued', 'leased', 'running', 'failed-retryable', 'succeeded', 'failed-permanent', 'dead-lettered', 'cancelled'];
    const rows = frame.queues.map((q) => {
      const pause = q.paused ? `<button data-task="resume" data-queue="${esc(q.name)}">Resume</button>` : `<button data-task="pause" data-queue="${esc(q.name)}">Pause</button>`;
      const button = `${pause} <button data-tasks-view="${esc(q.name)}">Tasks</button>`;
      return `<tr data-queue="${esc(q.name)}"><td>${esc(q.name)}</td><td class="${q.paused ? 'paused' : 'state-running'} queue-state">${q.paused ? 'paused' : 'active'}</td><td class="num">${num(q.depth)}</td>${states.map((s) => `<td class="num">${num(q.counts[s])}</td>`).join('')}<td class="num">${num(q.deadLetters)}</td><td>${button}</td></tr>`;
    });
    put('queues-view', table(['queue', 'state', { label: 'depth', num: true }, ...states.map((s) => ({ label: s, num: true })), { label: 'DLQ', num: true }, ''], rows, 'no queues'));
  }

  function renderStreams(frame) {
    const rows = [];
    for (const tree of frame.trees) {
      for (const entry of tree.sections?.streams ?? []) {
        const s = entry.value ?? {};
        const seek = s.stream === undefined ? '' : seekButton(s.stream, s.consumer);
        rows.push(`<tr data-stream="${esc(s.stream)}" data-consumer="${esc(s.consumer)}"><td>${esc(tree.node)}</td><td>${esc(s.stream)}</td><td>${esc(s.consumer)}</td><td class="num">${num(s.lag)}</td><td class="num">${num(s.pending)}</td><td class="num">${num(s.acked)}</td><td class="num">${num(s.failed)}</td><td>${entry.error ? esc(entry.error.code) : esc(s.lastError ?? '')}</td><td>${seek}</td></tr>`);
      }
    }
    put('streams-view', table(['node', 'stream', 'consumer', { label: 'lag', num: true }, { label: 'pending', num: true }, { label: 'acked', num: true }, { label: 'failed', num: true }, 'error', ''], rows, 'no stream consumers'));
  }

  // The process view: like observer's process list, read from /processes (or /nodes/<name>/processes)
  // every 2 s, sorted by any column (click its head) and filtered by text.
  const PS_COLUMNS = [
    ['ref', 'ref'], ['name', 'name'], ['behaviour', 'behaviour'], ['status', 'status'], ['mailboxLength', 'mailbox', true],
    ['messagesHandled', 'handled', true], ['messagesDropped', 'dropped', true], ['links', 'links', true], ['monitors', 'monitors', true],
    ['monitoredBy', 'monitored by', true], ['timers', 'timers', true], ['memoryEstimate', 'memory', true], ['parent', 'parent'],
  ];
  let psSort = { key: 'mailboxLength', desc: true };
  let psSnapshot;

  async function loadProcesses() {
    if ($('main').hidden || lastFrame === undefined) return;
    const select = $('ps-node');
    const names = lastFrame.trees.map((tree) => tree.node);
    if ([...select.options].map((o) => o.value).join() !== names.join()) {
      const chosen = select.value;
      select.innerHTML = names.map((n) => `<option value="${esc(n)}">${esc(n)}</option>`).join('');
      if (names.includes(chosen)) select.value = chosen;
    }
    const node = select.value || lastFrame.node;
    const path = node === lastFrame.node ? '/processes' : `/nodes/${encodeURIComponent(node)}/processes`;
    try {
      const response = await fetch(path, { headers: authHeaders(), cache: 'no-store' });
      if (!response.ok) {
        $('ps-note').textContent = `${response.status} ${(await response.json().catch(() => ({}))).error?.code ?? ''}`;
        return;
      }
      psSnapshot = await response.json();
      renderProcesses();
    } catch (error) {
      $('ps-note').textContent = `unreachable (${error.message})`;
    }
  }

  function renderProcesses() {
    if (psSnapshot === undefined) return;
    const filter = $('ps-filter').value.trim().toLowerCase();
    const list = psSnapshot.processes.filter((p) => filter === '' || `${p.ref} ${p.name ?? ''} ${p.behaviour}`.toLowerCase().includes(filter));
    const { key, desc } = psSort;
    list.sort((x, y) => {
      const a = x[key] ?? '';
      const b = y[key] ?? '';
      const order = typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
      return desc ? -order : order;
    });
    $('ps-note').textContent = `${list.length} of ${psSnapshot.total} processes${psSnapshot.truncated ? ' (snapshot truncated at its byte cap)' : ''}`;
    const head = PS_COLUMNS.map(([k, label, numeric]) => `<th data-sort="${k}"${numeric ? ' class="num"' : ''}>${esc(label)}${k === key ? (desc ? ' ↓' : ' ↑') : ''}</th>`).join('');
    const rows = list.slice(0, 500).map((p) => `<tr data-ref="${esc(p.ref)}">${PS_COLUMNS.map(([k, , numeric]) => `<td${numeric ? ' class="num"' : ''}>${k === 'mailboxLength' ? `${p.mailboxLength}/${p.mailboxCapacity}` : esc(p[k] ?? '')}</td>`).join('')}</tr>`);
    put('ps-view', `<table><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`);
  }

  // Streams (with admin.streams): the list every 5 s, and a stream's latest messages on View.
  async function loadStreams() {
    if ($('main').hidden) return;
    const response = await fetch('/streams', { headers: authHeaders(), cache: 'no-store' }).catch(() => undefined);
    if (response === undefined) return;
    if (response.status === 404) return put('stream-list', '<p class="empty">this surface has no stream store</p>');
    if (!response.ok) return;
    const { streams } = await response.json();
    const rows = streams.map((s) => `<tr data-stream="${esc(s.name)}"><td>${esc(s.name)}</td><td class="num">${num(s.messages)}</td><td class="num">${num(s.bytes)}</td><td class="num">${num(s.lastSeq)}</td><td class="num">${num(s.consumers)}</td><td><button data-view="${esc(s.name)}">View</button> <button data-purge="${esc(s.name)}">Purge…</button></td></tr>`);
    put('stream-list', table(['stream', { label: 'messages', num: true }, { label: 'bytes', num: true }, { label: 'last seq', num: true }, { label: 'consumers', num: true }, ''], rows, 'no streams'));
  }

  const seekButton = (stream, consumer) => `<button data-seek-stream="${esc(stream)}" data-seek-consumer="${esc(consumer)}">Seek…</button>`;
  let viewing;

  // View: the stream's consumers (with Seek) and its last 50 messages.
  async function viewStream(name) {
    viewing = name;
    const [response, detail] = await Promise.all([
      fetch(`/streams/${encodeURIComponent(name)}/messages?limit=50`, { headers: authHeaders(), cache: 'no-store' }),
      fetch(`/streams/${encodeURIComponent(name)}`, { headers: authHeaders(), cache: 'no-store' }).then((r) => (r.ok ? r.json() : { consumers: [] })).catch(() => ({ consumers: [] })),
    ]);
    const body = await response.json().catch(() => ({}));
    if (!response.ok) return put('stream-messages', `<p class="error">${esc(body.error?.code ?? response.status)}</p>`);
    const consumers = detail.consumers.map((c) => `<tr data-consumer="${esc(c.name)}"><td>${esc(c.name)}</td><td class="num">${num(c.ackFloor)}</td><td class="num next-seq">${num(c.nextSeq)}</td><td class="num">${num(c.pending)}</td><td class="num">${num(c.lag)}</td><td>${seekButton(name, c.name)}</td></tr>`);
    const consumerTable = table(['consumer', { label: 'ack floor', num: true }, { label: 'next seq', num: true }, { label: 'pending', num: true }, { label: 'lag', num: true }, ''], consumers, 'no consumers');
    const shown = (m) => (m.value !== undefined ? JSON.stringify(m.value) : m.text !== undefined ? m.text : `base64:${m.base64}`);
    const rows = body.messages.map((m) => `<tr data-seq="${m.seq}"><td class="num">${m.seq}</td><td>${esc(new Date(m.time).toISOString())}</td><td>${esc(m.encoding)}</td><td>${esc(m.headers === null ? '' : JSON.stringify(m.headers))}</td><td class="payload">${esc(shown(m))}${m.truncated ? ' …' : ''}</td></tr>`);
    put('stream-messages', `<h3>${esc(name)}: consumers</h3><div class="stream-consumers">${consumerTable}</div><h3>${esc(name)}: last messages</h3>${table([{ label: 'seq', num: true }, 'time', 'encoding', 'headers', 'payload'], rows, 'no messages')}`);
  }

  hooks.viewStream = viewStream;
  // After a purge or a seek: the list and the stream on view show the change at once.
  hooks.streamsChanged = (stream) => {
    void loadStreams();
    if (viewing === stream) void viewStream(stream);
  };

  $('login').addEventListener('submit', (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $('token').value);
    $('token').value = '';
    void connect();
  });
  $('forget').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    controller?.abort();
    showLogin('');
  });
  $('tree-filter').addEventListener('input', () => lastFrame && renderTrees(lastFrame));
  $('ps-filter').addEventListener('input', renderProcesses);
  $('ps-node').addEventListener('change', () => void loadProcesses());
  $('ps-view').addEventListener('click', (event) => {
    const th = event.target.closest('th[data-sort]');
    if (th === null) return;
    const key = th.dataset.sort;
    psSort = { key, desc: psSort.key === key ? !psSort.desc : true };
    renderProcesses();
  });
  setInterval(() => void loadProcesses(), 2000);
  setInterval(() => void loadStreams(), 5000);
  void connect();
})();
