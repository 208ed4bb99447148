/**
 * COPY FROM STDIN and COPY TO STDOUT as Node streams, through the real server: data both ways,
 * backpressure, server errors, early exits that leave the connection usable.
 */
import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbError } from '../../../src/data/errors.js';
import { freshDatabase, type FreshDatabase } from '../../support/pg.js';
import { sleep } from '../../support/systems.js';
import { rejection, withConnection } from './pg-support.js';

let db: FreshDatabase;
beforeAll(() => {
  db = freshDatabase('pgcopy');
});
afterAll(() => db.drop());

describe('COPY', () => {
  it('copies rows in from a stream, respecting backpressure, and reports the count', async () => {
    await withConnection(db, async (conn) => {
      await conn.query('create table items (id int primary key, name text)');
      const copy = conn.copyFrom('copy items (id, name) from stdin');
      let deepest = 0;
      async function* lines(): AsyncGenerator<Buffer> {
        for (let batch = 0; batch < 200; batch++) {
          deepest = Math.max(deepest, copy.writableLength);
          let text = '';
          for (let i = 0; i < 1000; i++) {
            const id = batch * 1000 + i;
            text += `${id}\tname\\t${id} é\n`;
          }
          yield Buffer.from(text);
        }
        yield Buffer.from('200000\t\\N\n');
      }
      await pipeline(lines(), copy);
      expect(copy.result).toMatchObject({ command: 'COPY', affected: 200_001 });
      // The stream never held much more than its high-water mark: the writer waited for the socket.
      expect(deepest).toBeLessThan(copy.writableHighWaterMark + 64 * 1024);
      const r = await conn.query<{ n: number; name: string | null }>('select count(*)::int4 as n, (select name from items where id = 7) as name from items');
      expect(r.rows[0]).toEqual({ n: 200_001, name: 'name\t7 é' });
      expect((await conn.query('select name from items where id = 200000')).rows).toEqual([{ name: null }]);
    });
  });

  it('a bad row fails the COPY with the server error and nothing is kept; destroying the stream rolls it back', async () => {
    await withConnection(db, async (conn) => {
      await conn.query('create table nums (n int)');
      const error = await rejection(pipeline(Readable.from([Buffer.from('1\n2\n'), Buffer.from('three\n4\n')]), conn.copyFrom('copy nums from stdin')));
      expect(error).toBeInstanceOf(DbError);
      expect((error as DbError).sqlstate).toBe('22P02');
      expect((await conn.query('select count(*)::int4 as n from nums')).rows).toEqual([{ n: 0 }]);
      const copy = conn.copyFrom('copy nums from stdin');
      await new Promise<void>((resolve, reject) => copy.write(Buffer.from('1\n2\n'), (e) => (e ? reject(e) : resolve())));
      copy.destroy(new Error('changed my mind'));
      expect((await rejection(finished(copy))).message).toBe('changed my mind');
      expect((await conn.query('select count(*)::int4 as n from nums')).rows).toEqual([{ n: 0 }]);
      // Aborting the context mid-COPY fails it too.
      const controller = new AbortController();
      const aborted = conn.copyFrom('copy nums from stdin', { signal: controller.signal });
      await new Promise<void>((resolve, reject) => aborted.write(Buffer.from('5\n'), (e) => (e ? reject(e) : resolve())));
      controller.abort(new Error('stop'));
      aborted.end(Buffer.from('6\n'));
      const abortError = await rejection(finished(aborted));
      expect((abortError as DbError).sqlstate).toBe('57014');
      expect((await conn.query('select count(*)::int4 as n from nums')).rows).toEqual([{ n: 0 }]);
    });
  });

  it('copies out to a Readable, a slow reader included', async () => {
    await withConnection(db, async (conn) => {
      const chunks: Buffer[] = [];
      let reads = 0;
      for await (const chunk of conn.copyTo("copy (select g, 'row ' || g from generate_series(1, 60000) g) to stdout")) {
        chunks.push(chunk as Buffer);
        if (++reads % 5000 === 0) await sleep(5);
      }
      const lines = Buffer.concat(chunks).toString('utf8').split('\n');
      expect(lines).toHaveLength(60_001);
      expect(lines[0]).toBe('1\trow 1');
      expect(lines[59_999]).toBe('60000\trow 60000');
      expect(lines[60_000]).toBe('');
      const missing = conn.copyTo('copy nowhere to stdout');
      const error = await rejection(
        (async () => {
          for await (const _ of missing) void _;
        })(),
      );
      expect((error as DbError).sqlstate).toBe('42P01');
    });
  });

  it('stopping a COPY TO early cancels the rest; the connection goes on', async () => {
    await withConnection(db, async (conn) => {
      let bytes = 0;
      // Rows made one at a time (a set-returning function in the select list is not materialized first).
      for await (const chunk of conn.copyTo('copy (select generate_series(1, 50000000), repeat($$x$$, 100)) to stdout')) {
        bytes += (chunk as Buffer).length;
        if (bytes > 1_000_000) break;
      }
      // 5 GB would take far longer than this to read and throw away.
      const stopped = Date.now();
      expect((await conn.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
      expect(Date.now() - stopped).toBeLessThan(3_000);
      expect(await conn.stats()).toMatchObject({ sent: 0, queued: 0, txStatus: 'I' });
    });
  });
});
