/**
 * The data path between a channel and its worker once the worker is bound: a BroadcastChannel
 * (named per worker slot) carrying batch frames and their replies by structured clone, one
 * postMessage each way. The actor call path costs about three times a raw postMessage round trip
 * (msgpack, the placement hub's routing, the call bookkeeping on both sides), and an awaited
 * statement pays it once per statement; supervision, exits and the first ops after a start still
 * go through the actor.
 *
 * A worker instance only answers frames stamped with the generation it was bound to (Op.Bind, sent
 * through the actor), so an old instance still alive in its thread never runs a newer generation's
 * statements.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { BatchFrame, ReplyFrame } from './protocol.js';

/** Main → worker. */
export interface DirectRequest {
  /** Generation the batch was issued for. */
  readonly g: number;
  /** Batch id, echoed in the reply. */
  readonly i: number;
  readonly f: BatchFrame;
}

/** Worker → main: the reply frame, or why the batch could not be run at all. */
export interface DirectReply {
  readonly i: number;
  readonly r?: ReplyFrame;
  readonly e?: string;
}

/** Node's BroadcastChannel has ref/unref (since 15.4) that @types/node does not declare. */
type RefCountedChannel = BroadcastChannel & { ref(): void; unref(): void };

export class DirectLink {
  readonly #port: RefCountedChannel;
  #nextId = 1;
  #pending = 0;

  constructor(
    readonly name: string,
    onReply: (reply: DirectReply) => void,
  ) {
    this.#port = new BroadcastChannel(name) as RefCountedChannel;
    this.#port.onmessage = (event) => {
      if (--this.#pending === 0) this.#port.unref();
      onReply((event as { data: DirectReply }).data);
    };
    // Held only while a batch waits for its reply, so an idle database never keeps the process alive.
    this.#port.unref();
  }

  /** Posts a batch; returns its id. */
  post(generation: number, frame: BatchFrame): number {
    const id = this.#nextId++;
    if (this.#pending++ === 0) this.#port.ref();
    this.#port.postMessage({ g: generation, i: id, f: frame } satisfies DirectRequest);
    return id;
  }

  /** A batch that will get no reply (its worker exited). */
  forget(): void {
    if (this.#pending > 0 && --this.#pending === 0) this.#port.unref();
  }

  close(): void {
    this.#port.close();
  }
}
