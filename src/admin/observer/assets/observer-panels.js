// The observer page's panels of replication and rooms, drawn from the trees' `sections.replication`
// and `sections.rooms` (each shown only when some node has any), and a small chart of the
// replication lag over time (the frames' `sample.replicationLag`).
'use strict';
(() => {
  const { $, esc, num, put, table, panels, hooks } = window.Molo;
  let lagChart;
  const entriesOf = (frame, section) => frame.trees.flatMap((tree) => (tree.sections?.[section] ?? []).map((entry) => ({ node: tree.node, ...entry })));

  function renderReplication(frame) {
    const entries = entriesOf(frame, 'replication');
    $('replication-section').hidden = entries.length === 0;
    const rows = entries.map(({ node, path, value: s = {}, error }) => {
      const pull = s.direction === 'pull';
      const state = pull ? s.state : 'pushing';
      return `<tr data-node="${esc(node)}" data-peer="${esc(s.peer)}" data-direction="${esc(s.direction)}" title="${esc(path)}"><td>${esc(node)}</td><td>${esc(s.peer)}</td><td>${esc(s.direction)}</td><td class="state-${esc(state === 'live' ? 'running' : state)}">${esc(state)}</td><td class="num">${num(pull ? s.cursor : s.pushed)}</td><td class="num">${num(s.head)}</td><td class="num lag">${pull ? num(s.lag) : ''}</td><td class="num">${num(pull ? s.applied : s.batches)}</td><td class="num">${pull ? num(s.failures) : ''}</td><td class="error">${esc(error?.code ?? s.lastError ?? '')}</td></tr>`;
    });
    put('replication-view', table(['node', 'peer', 'direction', 'state', { label: 'cursor / pushed', num: true }, { label: 'head', num: true }, { label: 'lag', num: true }, { label: 'applied / batches', num: true }, { label: 'failures', num: true }, 'last error'], rows, 'no replicators'));
  }

  function renderRooms(frame) {
    const entries = entriesOf(frame, 'rooms');
    $('rooms-section').hidden = entries.length === 0;
    const parts = entries.map(({ node, path, value: s = {}, error }) => {
      if (error !== undefined) return `<h3>${esc(node)} ${esc(path)}</h3><p class="error">${esc(error.code)}: ${esc(error.message)}</p>`;
      const c = s.counters ?? {};
      const summary = table(['instance', { label: 'port', num: true }, { label: 'sockets', num: true }, { label: 'rooms', num: true }, { label: 'queued', num: true }, { label: 'sent', num: true }, { label: 'dropped', num: true }, { label: 'refused', num: true }], [
        `<tr class="rooms-summary"><td>${esc(s.instance)}</td><td class="num">${num(s.port)}</td><td class="num sockets">${num(s.sockets)}</td><td class="num rooms">${num(s.rooms)}</td><td class="num queued">${num(s.queued)}</td><td class="num">${num(c.sent)}</td><td class="num">${num(c.dropped)}</td><td class="num">${num(c.refused)}</td></tr>`,
      ], '');
      const rooms = (s.roomList ?? []).map((r) => `<tr data-room="${esc(r.room)}"><td>${esc(r.room)}</td><td class="num sockets">${num(r.sockets)}</td></tr>`);
      const slow = (s.slowSockets ?? []).map((k) => `<tr data-socket="${esc(k.socket)}"><td>${esc(k.socket)}</td><td class="num">${num(k.rooms)}</td><td class="num queued">${num(k.queued)}/${num(s.sendQueueMax)}</td></tr>`);
      return `<div class="rooms" data-node="${esc(node)}" data-instance="${esc(s.instance)}"><h3>${esc(node)}: ${esc(path)}</h3>${summary}<div class="charts"><div>${table(['room', { label: 'sockets here', num: true }], rooms, 'no rooms with sockets here')}</div><div>${table(['slow socket', { label: 'rooms', num: true }, { label: 'queued', num: true }], slow, 'no socket has frames queued')}</div></div></div>`;
    });
    put('rooms-view', parts.join(''));
  }

  hooks.drawReplication = (t, lag) => {
    if (typeof uPlot === 'undefined' || $('replication-section').hidden) return;
    if (lagChart === undefined) {
      const width = Math.max(360, ($('chart-replication').clientWidth || 480) - 8);
      lagChart = new uPlot({ width, height: 140, scales: { x: { time: true } }, title: 'Replication lag (entries)', series: [{}, { label: 'lag', stroke: '#6b46c1' }] }, [[], []], $('chart-replication'));
    }
    lagChart.setData([t, lag]);
  };

  panels.push(renderReplication, renderRooms);
})();
