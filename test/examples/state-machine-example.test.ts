import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

describe('examples/state-machine.ts', () => {
  it('runs the code lock: postponed visitor, inserted code, both timeouts, final state', async () => {
    const result = await runScript('examples/state-machine.ts');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      'front-door: locked',
      'status: locked',
      'postponed events: 1',
      'front-door: open',
      'visitor: walked through',
      'status: open',
      'front-door: locked',
      'after the state timeout: locked',
      'buttons reset by the event timeout',
      'buttons: []',
      'terminate: normal',
      'stopped with: normal',
      'actors left: 0',
    ]);
  });
});
