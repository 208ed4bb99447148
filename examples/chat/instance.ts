/**
 * One chat instance: rooms on the shared Postgres bus with presence, serving the page at `/` and
 * presence at `/presence?room=`, and `POST /say` broadcasting to a room. A client's name comes from
 * `?name=` (a demo: an application would use a session store and `sessionAuthenticate`).
 */
import { readFileSync } from 'node:fs';
import { ActorSystem } from 'molo/actors';
import { createPostgresPool } from 'molo/data';
import { postgresBus, postgresPresence, startRooms, type Rooms } from 'molo/nodes';

const [name, port, database] = process.argv.slice(2);
const page = readFileSync(new URL('./page.html', import.meta.url));
const system = new ActorSystem({ node: name!, logger: false });
const db = await createPostgresPool(system, { host: process.env.MOLO_PG_HOST ?? '127.0.0.1', port: Number(process.env.MOLO_PG_PORT ?? 5432), user: process.env.MOLO_PG_USER ?? 'postgres', database: database ?? 'test', min: 1, max: 4 });
const bus = await postgresBus(db);
const rooms: Rooms = await startRooms(system, {
  bus,
  instance: name,
  port: Number(port),
  host: '127.0.0.1',
  presence: await postgresPresence(db, { ttlMs: 3_000 }),
  authenticate: (req) => ({ name: (new URL(req.url ?? '/', 'http://x').searchParams.get('name') ?? 'guest').slice(0, 32) }),
  // Sockets only join; messages go through POST /say, where the server adds the sender's name.
  authorize: (_user, _room, action) => action === 'join',
  httpHandler: async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
      return true;
    }
    if (url.pathname === '/presence') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await rooms.presence(url.searchParams.get('room') ?? 'lobby')));
      return true;
    }
    if (url.pathname === '/say' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) if ((body += String(chunk)).length > 4_096) break;
      const { room, text } = JSON.parse(body) as { room: string; text: string };
      const from = (url.searchParams.get('name') ?? 'guest').slice(0, 32);
      const seq = await rooms.broadcast(room, { from, text: String(text).slice(0, 1_000) });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ seq }));
      return true;
    }
    return false;
  },
});
process.send?.({ ready: rooms.port });
console.log(`${name} listening on 127.0.0.1:${rooms.port}`);
