import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Ref } from '../../../src/actors/index.js';
import { isTopicMessage, type Subscription, type TopicMessage } from '../../../src/bus/index.js';
import { eventually, testSystem } from '../../support/systems.js';
import { nextTurn, numbered, numberOf, testBroker } from './helpers.js';

/**
 * Random subscribe / unsubscribe / publish / tick sequences against a tiny model of the broker:
 * which subscriptions receive which messages, in which order. Queues are large enough that nothing
 * is dropped; "tick" lets the dispatcher (and the subscriber actors) run.
 */
const CHANNELS = ['a', 'b', 'a:b', 'a:c', 'b:c', 'a:b:c'];
const PATTERNS = ['*', 'a:*', '*:c', '*:*', 'a:*:c', '*:b:*', 'b:c'];

type Command =
  | { readonly op: 'subscribe'; readonly topic: string; readonly isPattern: boolean; readonly actor: boolean }
  | { readonly op: 'unsubscribe'; readonly index: number }
  | { readonly op: 'publish'; readonly channel: string }
  | { readonly op: 'tick' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('subscribe' as const), topic: fc.constantFrom(...CHANNELS), isPattern: fc.constant(false), actor: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('subscribe' as const), topic: fc.constantFrom(...PATTERNS), isPattern: fc.constant(true), actor: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unsubscribe' as const), index: fc.nat(40) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('publish' as const), channel: fc.constantFrom(...CHANNELS) }) },
  { weight: 2, arbitrary: fc.constant({ op: 'tick' as const }) },
);

/** The model's idea of a pattern, written independently of the trie. */
function matches(topic: string, isPattern: boolean, channel: string): boolean {
  if (!isPattern) return topic === channel;
  const pattern = topic.split(':');
  const segments = channel.split(':');
  return pattern.length === segments.length && pattern.every((segment, i) => segment === '*' || segment === segments[i]);
}

interface ModelSubscription {
  readonly topic: string;
  readonly isPattern: boolean;
  active: boolean;
  pending: number[];
  readonly received: number[];
  discarded: number;
}

describe('broker against a model (fast-check)', () => {
  it('random subscribe/unsubscribe/publish sequences deliver what the model says, in order', async () => {
    const system = testSystem();
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 60 }), async (commands) => {
        const broker = testBroker({ system, queueCapacity: 4_096, ceilings: { queueCapacity: 4_096 } });
        const model: ModelSubscription[] = [];
        const real: { subscription: Subscription; received: number[]; actor?: Ref }[] = [];
        let next = 0;
        let unrouted = 0;

        const settle = async (): Promise<void> => {
          await nextTurn();
          await system.settle();
          for (const entry of model) {
            if (!entry.active) continue;
            entry.received.push(...entry.pending);
            entry.pending = [];
          }
        };
        const compare = (): void => {
          model.forEach((entry, i) => {
            expect(real[i]!.received, `subscription ${i} (${entry.isPattern ? 'pattern' : 'channel'} ${entry.topic})`).toEqual(entry.received);
            expect(real[i]!.subscription.active).toBe(entry.active);
            expect(real[i]!.subscription.discarded).toBe(entry.discarded);
            expect(real[i]!.subscription.dropped).toBe(0);
          });
        };

        for (const step of commands) {
          switch (step.op) {
            case 'subscribe': {
              const received: number[] = [];
              let subscription: Subscription;
              let actor: Ref | undefined;
              if (step.actor) {
                actor = system.spawn((message: unknown) => {
                  if (isTopicMessage(message)) received.push(numberOf(message));
                });
                subscription = step.isPattern ? broker.subscribePattern(step.topic, actor) : broker.subscribe(step.topic, actor);
              } else {
                const callback = (message: TopicMessage): void => void received.push(numberOf(message));
                subscription = step.isPattern ? broker.subscribePattern(step.topic, callback) : broker.subscribe(step.topic, callback);
              }
              real.push({ subscription, received, actor });
              model.push({ topic: step.topic, isPattern: step.isPattern, active: true, pending: [], received: [], discarded: 0 });
              break;
            }
            case 'unsubscribe': {
              if (model.length === 0) break;
              const i = step.index % model.length;
              const entry = model[i]!;
              expect(real[i]!.subscription.unsubscribe()).toBe(entry.active);
              if (entry.active) {
                entry.active = false;
                entry.discarded += entry.pending.length;
                entry.pending = [];
              }
              break;
            }
            case 'publish': {
              const id = next++;
              let expected = 0;
              for (const entry of model) {
                if (entry.active && matches(entry.topic, entry.isPattern, step.channel)) {
                  entry.pending.push(id);
                  expected++;
                }
              }
              if (expected === 0) unrouted++;
              expect(broker.publish(step.channel, numbered(id))).toBe(expected);
              break;
            }
            case 'tick':
              await settle();
              compare();
              break;
            default:
              step satisfies never;
          }
        }
        await settle();
        compare();
        expect(broker.stats).toMatchObject({ published: next, unrouted, dropped: 0 });
        broker.close();
        for (const entry of real) if (entry.actor !== undefined) system.exit(entry.actor, 'shutdown');
        await eventually(() => system.actorCount === 0);
      }),
      { seed: 42, numRuns: 100 },
    );
  });
});
