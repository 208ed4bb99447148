import { describe, expect, it } from 'vitest';
import { codedError, MoloError } from '../../src/actors/coded-error.js';

class Sample extends codedError('TEST_SAMPLE', (limit: number, detail: string, cause?: unknown) => ({
  message: `over ${limit}: ${detail}`,
  fields: { limit, kind: 'sample' as const },
  options: { cause },
})) {}

class Bare extends codedError('TEST_BARE', (what: string) => `${what} is closed`) {}

describe('codedError', () => {
  it('makes a class of its own name, code and message', () => {
    const error = new Sample(3, 'too many');
    expect(error).toBeInstanceOf(Sample);
    expect(error).toBeInstanceOf(MoloError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('Sample');
    expect(error.code).toBe('TEST_SAMPLE');
    expect(Sample.code).toBe('TEST_SAMPLE');
    expect(error.message).toBe('over 3: too many');
    expect(new Bare('the queue')).not.toBeInstanceOf(Sample);
  });

  it('sets the public fields and passes the options to Error as given', () => {
    const cause = new Error('root');
    const error = new Sample(3, 'x', cause);
    expect(error.limit).toBe(3);
    expect(error.kind).toBe('sample');
    expect(error.cause).toBe(cause);
    // `{ cause: undefined }` still sets an own cause, as the hand-written `super` calls did.
    expect(Object.hasOwn(new Sample(1, 'y'), 'cause')).toBe(true);
  });

  it('takes a message alone, with no fields and no cause', () => {
    const error = new Bare('the queue');
    expect(error.message).toBe('the queue is closed');
    expect(Object.hasOwn(error, 'cause')).toBe(false);
    expect(Bare.code).toBe('TEST_BARE');
  });
});
