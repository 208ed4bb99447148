/**
 * The placed cases on Molo: send and call to an actor in a worker thread or a child process. A
 * sender in a tight loop meets the channel's in-flight budget (MailboxFull, as the target's
 * mailbox rejects) and waits a turn of the event loop for credit, so the rate includes the flow
 * control. Rows carry the bytes per message on the wire and the process's peak RSS.
 */
import { ActorSystem, behaviourModule, MailboxFull, type Ref } from '../../src/actors/index.js';
import { placementHub } from '../../src/actors/placement/hub.js';
import { GenServer, type ServerRef } from '../../src/behaviours/index.js';
import type { Echo } from './placed-target.js';
import { now, round, type CaseName, type CaseRunner, type Sizes } from './cases.js';
import type { Row } from '../suite.js';

const TARGET = new URL('./placed-target.ts', import.meta.url);
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const mb = (bytes: number): number => round(bytes / 1_048_576, 1);

interface Measured {
  readonly ms: number;
  readonly bytes: number;
}

async function sendRun(system: ActorSystem, ref: Ref, n: number): Promise<Measured> {
  const stats = placementHub(system).stats;
  const bytesBefore = stats.bytesSent;
  const start = now();
  for (let i = 0; i < n; ) {
    try {
      system.send(ref, i);
      i++;
    } catch (error) {
      if (!(error instanceof MailboxFull)) throw error;
      await turn();
    }
  }
  const count = await system.call<number>(ref, 'count', 600_000);
  const ms = now() - start;
  if (count < n) throw new Error(`the placed actor saw ${count} of ${n} messages`);
  return { ms, bytes: stats.bytesSent - bytesBefore };
}

async function callRun(system: ActorSystem, ref: Ref, n: number): Promise<Measured> {
  const stats = placementHub(system).stats;
  const bytesBefore = stats.bytesSent + stats.bytesReceived;
  const start = now();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += await GenServer.call(system, ref as ServerRef<Echo>, i);
  const ms = now() - start;
  if (sum !== (n * (n - 1)) / 2) throw new Error('wrong replies');
  return { ms, bytes: stats.bytesSent + stats.bytesReceived - bytesBefore };
}

function placedCase(name: CaseName, placement: 'thread' | 'process', kind: 'send' | 'call'): CaseRunner {
  return async (sizes: Sizes): Promise<Row> => {
    const rssStart = process.memoryUsage().rss;
    const system = new ActorSystem({ node: 'bench' });
    const ref =
      kind === 'send'
        ? await system.spawnPlaced(behaviourModule(TARGET, 'counter'), { placement, mailbox: { capacity: 1_000_000 } })
        : await GenServer.startPlaced(system, behaviourModule<Echo>(TARGET, 'echo'), { placement });
    const run = kind === 'send' ? sendRun : callRun;
    await run(system, ref, sizes.warmup);
    const { ms, bytes } = await run(system, ref, sizes.n);
    const dropped = placementHub(system).stats.messagesDropped;
    system.shutdown();
    const rate = sizes.n / (ms / 1_000);
    return {
      case: name,
      impl: 'molo',
      ops_per_s: Math.round(rate),
      n: sizes.n,
      rounds: 1,
      us_per_op: round(1e6 / rate, 3),
      // Send: main to host, framing included; call: both ways (request and reply).
      bytes_per_msg: round(bytes / sizes.n, 1),
      rss_start_mb: mb(rssStart),
      peak_rss_mb: mb(process.resourceUsage().maxRSS * 1_024),
      dropped,
    };
  };
}

export const placedCases = {
  send_thread: placedCase('send_thread', 'thread', 'send'),
  send_process: placedCase('send_process', 'process', 'send'),
  call_thread: placedCase('call_thread', 'thread', 'call'),
  call_process: placedCase('call_process', 'process', 'call'),
};
