/**
 * The schedule table, written once against `Database` for both backends, in the task queue's
 * database so a fire's enqueue and its next-fire update commit together. One row per entry:
 * `(id, queue, task JSON, schedule JSON, next_fire, last_fire, created_at, updated_at)`, indexed by
 * `next_fire` so a tick reads only what is due.
 *
 * A fire moves `next_fire` by compare-and-set (`WHERE next_fire = <the value it read>`): a fire
 * racing an `update`, a `remove` or another scheduler finds the row changed and rolls back.
 */
import type { Database, Queryable } from '../../data/index.js';
import { InvalidBusOption } from '../errors.js';
import type { ScheduleEntry, ScheduledTask, StoredSchedule } from './entry.js';

export const DEFAULT_SCHEDULE_TABLE = 'molo_schedules';

type Row = {
  readonly id: string;
  readonly queue: string;
  readonly task: string;
  readonly schedule: string;
  readonly next_fire: unknown;
  readonly last_fire: unknown;
  readonly created_at: unknown;
  readonly updated_at: unknown;
};

const COLUMNS = 'id, queue, task, schedule, next_fire, last_fire, created_at, updated_at';

export function checkScheduleTable(table: unknown): string {
  if (typeof table !== 'string' || !/^[a-z_][a-z0-9_]{0,39}$/.test(table)) {
    throw new InvalidBusOption('scheduler.table', 'must be 1-40 lowercase letters, digits or _, not starting with a digit');
  }
  return table;
}

export class ScheduleStore {
  readonly #db: Database;
  readonly #t: string;
  readonly #int: string;

  constructor(db: Database, table: string) {
    this.#db = db;
    this.#t = checkScheduleTable(table);
    this.#int = db.backend === 'postgres' ? '::int8' : '';
  }

  async create(): Promise<void> {
    const int = this.#db.backend === 'postgres' ? 'int8' : 'INTEGER';
    await this.#db.query(`CREATE TABLE IF NOT EXISTS ${this.#t} (id text PRIMARY KEY, queue text NOT NULL, task text NOT NULL, schedule text NOT NULL,
      next_fire ${int}, last_fire ${int}, created_at ${int} NOT NULL, updated_at ${int} NOT NULL)`);
    await this.#db.query(`CREATE INDEX IF NOT EXISTS ${this.#t}_next_fire ON ${this.#t} (next_fire)`);
  }

  async count(db: Queryable = this.#db): Promise<number> {
    const { rows } = await db.query<{ n: unknown }>(`SELECT count(*) AS n FROM ${this.#t}`);
    return Number(rows[0]?.n ?? 0);
  }

  async get(id: string, db: Queryable = this.#db): Promise<ScheduleEntry | undefined> {
    const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM ${this.#t} WHERE id = $1`, [id]);
    return rows.length === 0 ? undefined : entryOf(rows[0]!);
  }

  /** Entries in id order, `limit` of them after `after`. */
  async list(limit: number, after?: string): Promise<ScheduleEntry[]> {
    const { rows } =
      after === undefined
        ? await this.#db.query<Row>(`SELECT ${COLUMNS} FROM ${this.#t} ORDER BY id LIMIT $1${this.#int}`, [limit])
        : await this.#db.query<Row>(`SELECT ${COLUMNS} FROM ${this.#t} WHERE id > $1 ORDER BY id LIMIT $2${this.#int}`, [after, limit]);
    return rows.map(entryOf);
  }

  /** Entries due at `now`, earliest first. */
  async due(now: number, limit: number): Promise<ScheduleEntry[]> {
    const { rows } = await this.#db.query<Row>(
      `SELECT ${COLUMNS} FROM ${this.#t} WHERE next_fire IS NOT NULL AND next_fire <= $1${this.#int} ORDER BY next_fire LIMIT $2${this.#int}`,
      [now, limit],
    );
    return rows.map(entryOf);
  }

  /** Inserts unless the id exists; resolves with whether it did. */
  async insert(tx: Queryable, entry: ScheduleEntry): Promise<boolean> {
    const i = this.#int;
    const { rows } = await tx.query(
      `INSERT INTO ${this.#t} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5${i}, $6${i}, $7${i}, $8${i}) ON CONFLICT (id) DO NOTHING RETURNING id`,
      [entry.id, entry.queue, JSON.stringify(entry.task), JSON.stringify(entry.schedule), entry.nextFireAt, entry.lastFireAt, entry.createdAt, entry.updatedAt],
    );
    return rows.length > 0;
  }

  /** Rewrites an entry's queue, task, schedule and next fire; resolves with whether it existed. */
  async replace(tx: Queryable, entry: ScheduleEntry): Promise<boolean> {
    const i = this.#int;
    const { rows } = await tx.query(
      `UPDATE ${this.#t} SET queue = $2, task = $3, schedule = $4, next_fire = $5${i}, updated_at = $6${i} WHERE id = $1 RETURNING id`,
      [entry.id, entry.queue, JSON.stringify(entry.task), JSON.stringify(entry.schedule), entry.nextFireAt, entry.updatedAt],
    );
    return rows.length > 0;
  }

  async delete(id: string): Promise<boolean> {
    const { rows } = await this.#db.query(`DELETE FROM ${this.#t} WHERE id = $1 RETURNING id`, [id]);
    return rows.length > 0;
  }

  /**
   * A fire's bookkeeping, inside its transaction: moves `next_fire` from `expected` to `next` (and
   * `last_fire` to `fired`, when a run happened), or deletes the entry when it will never fire
   * again and `deleteWhenDone`. Resolves false when the row no longer holds `expected`.
   */
  async advance(tx: Queryable, id: string, expected: number, next: number | null, fired: number | null, now: number, deleteWhenDone: boolean): Promise<boolean> {
    const i = this.#int;
    if (next === null && deleteWhenDone) {
      const { rows } = await tx.query(`DELETE FROM ${this.#t} WHERE id = $1 AND next_fire = $2${i} RETURNING id`, [id, expected]);
      return rows.length > 0;
    }
    const { rows } = await tx.query(
      `UPDATE ${this.#t} SET next_fire = $3${i}, last_fire = COALESCE($4${i}, last_fire), updated_at = $5${i} WHERE id = $1 AND next_fire = $2${i} RETURNING id`,
      [id, expected, next, fired, now],
    );
    return rows.length > 0;
  }
}

function entryOf(row: Row): ScheduleEntry {
  return {
    id: row.id,
    queue: row.queue,
    task: JSON.parse(row.task) as ScheduledTask,
    schedule: JSON.parse(row.schedule) as StoredSchedule,
    nextFireAt: row.next_fire === null ? null : Number(row.next_fire),
    lastFireAt: row.last_fire === null ? null : Number(row.last_fire),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
