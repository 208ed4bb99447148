/**
 * The main thread's side of bench/data/plain-worker-thread.mjs: a request id per statement, a map
 * of pending resolvers, one postMessage each way. What a user who skipped Molo would write.
 */
import { Worker } from 'node:worker_threads';

interface Reply {
  readonly id: number;
  readonly row?: Record<string, unknown>;
  readonly changes?: number;
  readonly error?: string;
}

export class PlainSqliteWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  #nextId = 0;

  constructor(file: string) {
    this.#worker = new Worker(new URL('./plain-worker-thread.mjs', import.meta.url), { workerData: { file } });
    this.#worker.on('message', (reply: Reply) => {
      const waiter = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      if (reply.error !== undefined) waiter?.reject(new Error(reply.error));
      else waiter?.resolve(reply);
    });
  }

  #send(kind: 'exec' | 'get' | 'run', sql: string, params: readonly unknown[]): Promise<Reply> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, kind, sql, params });
    });
  }

  async exec(sql: string): Promise<void> {
    await this.#send('exec', sql, []);
  }

  async get(sql: string, params: readonly unknown[]): Promise<Record<string, unknown> | undefined> {
    return (await this.#send('get', sql, params)).row;
  }

  async run(sql: string, params: readonly unknown[]): Promise<number> {
    return (await this.#send('run', sql, params)).changes ?? 0;
  }

  close(): Promise<number> {
    return this.#worker.terminate();
  }
}
