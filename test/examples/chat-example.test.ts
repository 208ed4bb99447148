/**
 * examples/chat/main.ts: two instances behind HAProxy; the page is served through it, a socket
 * joins a room and a message said over HTTP reaches it stamped with the sender's name; Ctrl-C
 * (SIGINT to the group) stops everything.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/pg.js';
import { projectRoot, TS_NODE_ARGS } from '../support/run-script.js';
import { Client } from '../nodes/rooms/support.js';

describe('examples/chat', () => {
  it.skipIf(!existsSync('/usr/sbin/haproxy'))('serves the page and chats through HAProxy', { timeout: 40_000 }, async () => {
    const fresh = freshDatabase('chat');
    const front = 20_000 + Math.floor(Math.random() * 30_000);
    const child = spawn(process.execPath, [...TS_NODE_ARGS, 'examples/chat/main.ts'], {
      cwd: projectRoot,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CHAT_PORT: String(front), MOLO_PG_DATABASE: fresh.database },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let client: Client | undefined;
    try {
      const deadline = Date.now() + 20_000;
      while (!output.includes('Ctrl-C stops it')) {
        if (Date.now() > deadline) throw new Error(output);
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 800));
      const page = await (await fetch(`http://127.0.0.1:${front}/?name=ada`)).text();
      expect(page).toContain('<title>Molo chat</title>');
      client = await Client.connect(front);
      expect((await client.join('lobby')).t).toBe('joined');
      const said = await fetch(`http://127.0.0.1:${front}/say?name=ada`, { method: 'POST', body: JSON.stringify({ room: 'lobby', text: 'hi' }) });
      expect(said.status).toBe(200);
      await client.waitCount('lobby', 1);
      expect(client.msgs('lobby')[0]!.data).toEqual({ from: 'ada', text: 'hi' });
    } finally {
      await client?.close();
      process.kill(-child.pid!, 'SIGINT');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 5_000);
      expect(await exited).toBe(0);
      clearTimeout(timer);
      fresh.drop();
    }
  });
});
