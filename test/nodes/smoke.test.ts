import { describe, expect, it } from 'vitest';
import { CallRequest, DownMessage, type Ref } from '../../src/actors/index.js';
import { eventually } from '../support/systems.js';
import { testNode } from './support.js';

describe('two nodes in one process', () => {
  it('send, call, whereis, monitor', async () => {
    const a = await testNode('a');
    const b = await testNode('b');
    await a.connect(b.name);
    expect(a.nodes()).toEqual([b.name]);
    await eventually(() => b.nodes().length === 1);
    const got: unknown[] = [];
    const echo = b.system.spawn((message) => {
      if (message instanceof CallRequest) message.reply(['echo', message.request]);
      else got.push(message);
    }, { name: 'echo' });
    const ref = (await a.whereis('echo', b.name)) as Ref;
    expect(ref.equals(echo)).toBe(true);
    expect(await a.system.call(ref, 1)).toEqual(['echo', 1]);
    a.system.send(ref, 'hello');
    a.sendNamed('echo', b.name, 'named');
    await eventually(() => got.length === 2);
    expect(got).toEqual(['hello', 'named']);
    const downs: unknown[] = [];
    a.system.spawn((message, ctx) => {
      if (message === 'go') ctx.monitor(ref);
      else if (message instanceof DownMessage) downs.push(message.reason);
    }, { name: 'watcher' });
    a.system.send('watcher', 'go');
    await new Promise((resolve) => setTimeout(resolve, 50));
    b.system.exit(echo, 'shutdown');
    await eventually(() => downs.length === 1);
    expect(downs).toEqual(['shutdown']);
  });
});
