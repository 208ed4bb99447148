import { describe, expect, it } from 'vitest';
import { ActorErrorCode, NoProc, Ref } from '../../src/actors/index.js';
import { testSystem } from '../support/systems.js';
import { recorder } from './helpers.js';

describe('refs', () => {
  it('carry the node, a local id and the creation of the system that spawned them', () => {
    const system = testSystem({ node: 'alpha', creation: 42 });
    const ref = system.spawn(() => {});
    expect(ref).toBeInstanceOf(Ref);
    expect(ref.node).toBe('alpha');
    expect(ref.creation).toBe(42);
    expect(Number.isInteger(ref.id) && ref.id > 0).toBe(true);
    expect(String(ref)).toBe(`<alpha.${ref.id}.42>`);
    expect(JSON.stringify({ ref })).toBe(`{"ref":"<alpha.${ref.id}.42>"}`);
    system.exit(ref, 'kill');
  });

  it('get a random creation by default, different between incarnations', () => {
    const creations = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const system = testSystem();
      expect(Number.isInteger(system.creation) && system.creation > 0).toBe(true);
      creations.add(system.creation);
    }
    expect(creations.size).toBeGreaterThan(1);
  });

  it('compare by value: node, id and creation must all match', () => {
    const ref = new Ref('n', 7, 1);
    expect(ref.equals(new Ref('n', 7, 1))).toBe(true);
    expect(ref.equals(new Ref('m', 7, 1))).toBe(false);
    expect(ref.equals(new Ref('n', 8, 1))).toBe(false);
    expect(ref.equals(new Ref('n', 7, 2))).toBe(false);
  });

  it('never reuse an id within a system, even after the actor exits', async () => {
    const system = testSystem();
    const ids = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const ref = system.spawn(() => {});
      expect(ids.has(ref.id)).toBe(false);
      ids.add(ref.id);
      system.exit(ref, 'kill');
    }
    expect(system.actorCount).toBe(0);
  });

  it('a stale ref never reaches the actor that replaced it', async () => {
    const system = testSystem();
    const first = recorder(system, { name: 'service' });
    system.exit(first.ref, 'kill');
    const second = recorder(system, { name: 'service' });
    expect(second.ref.equals(first.ref)).toBe(false);

    system.send(first.ref, 'to the old one');
    system.send('service', 'to the name');
    await system.settle();

    expect(second.seen).toEqual(['to the name']);
    expect(first.seen).toEqual([]);
    expect(system.isAlive(first.ref)).toBe(false);
    expect(system.info(first.ref)).toBeUndefined();
    expect(system.isAlive(second.ref)).toBe(true);
    system.exit(second.ref, 'kill');
  });

  it('a ref from an earlier incarnation of the node never reaches the new one', async () => {
    const before = testSystem({ node: 'n1', creation: 1 });
    const old = before.spawn(() => {});
    before.exit(old, 'kill');
    before.shutdown();

    const after = testSystem({ node: 'n1', creation: 2 });
    const fresh = recorder(after);
    // Same node and (first) id, different creation: a different actor.
    expect(fresh.ref.id).toBe(old.id);
    expect(fresh.ref.equals(old)).toBe(false);
    after.send(old, 'stale');
    await after.settle();
    expect(fresh.seen).toEqual([]);
    after.exit(fresh.ref, 'kill');
  });

  it('sending to a dead ref is silent', async () => {
    const system = testSystem();
    const bystander = recorder(system);
    const ref = system.spawn(() => {});
    system.exit(ref, 'kill');
    expect(() => system.send(ref, 'hello?')).not.toThrow();
    // From inside an actor, too: the sender keeps running.
    const sender = recorder(system);
    const relay = system.spawn((message: unknown, ctx) => {
      ctx.send(ref, message);
      ctx.send(sender.ref, 'sent');
    });
    system.send(relay, 'hello?');
    await system.settle();
    expect(system.isAlive(relay)).toBe(true);
    expect(sender.seen).toEqual(['sent']);
    expect(bystander.seen).toEqual([]);
    for (const r of [relay, sender.ref, bystander.ref]) system.exit(r, 'kill');
  });

  it('sending to an unregistered name throws a typed NoProc', async () => {
    const system = testSystem();
    let thrown: unknown;
    try {
      system.send('nobody', 'hi');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(NoProc);
    expect((thrown as NoProc).code).toBe(ActorErrorCode.NoProc);
    expect((thrown as NoProc).code).toBe('ACTOR_NOPROC');
    expect((thrown as NoProc).target).toBe('nobody');

    // Inside an actor the throw is the sender's own failure: it exits with NoProc.
    const sender = system.spawn((_message: unknown, ctx) => ctx.send('nobody', 'hi'));
    const exited = system.exited(sender);
    system.send(sender, 'go');
    const reason = await exited;
    expect(reason).toBeInstanceOf(NoProc);
  });
});
