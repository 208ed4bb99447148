import { describe, expect, it } from 'vitest';
import { CallRequest } from '../src/actors/index.js';
import { testSystem } from './support/systems.js';

describe('kernel smoke', () => {
  it('sends, calls and exits', async () => {
    const system = testSystem();
    const seen: number[] = [];
    const echo = system.spawn<number>((message) => {
      if (message instanceof CallRequest) message.reply(message.request);
      else if (typeof message === 'number') seen.push(message);
    });
    system.send(echo, 1);
    expect(seen).toEqual([]);
    expect(await system.call(echo, 'x')).toBe('x');
    expect(seen).toEqual([1]);
    system.exit(echo, 'kill');
    expect(await system.exited(echo)).toBe('noproc');
  });
});
