import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MoloError } from '../../src/actors/index.js';
import * as admin from '../../src/admin/index.js';
import { AdminErrorCode } from '../../src/admin/index.js';
import { REPO } from './helpers.js';

const doc = readFileSync(`${REPO}docs/admin.md`, 'utf8');

/** One instance of every error class the admin area exports. */
const samples: MoloError[] = [
  new admin.AdminInvalidOption('x', 'y'),
  new admin.AdminListenFailed('127.0.0.1', 1, new Error('EADDRINUSE')),
  new admin.NodeStartFailed('n', new Error('e')),
  new admin.AdminUnavailable('gone'),
  new admin.AdminBusy(4),
  new admin.SnapshotTimeout('<a.1.1>', 5),
  new admin.SnapshotFailed('x'),
  new admin.AdminNotFound('/x'),
  new admin.AdminMethodNotAllowed('POST'),
  new admin.MetricsFailed(new Error('e')),
  new admin.AdminUnreachable('http://x', new Error('e')),
  new admin.AdminBadResponse('http://x', 500, 'e'),
  new admin.CliUsageError('e'),
  new admin.AdminHostRefused('evil.example'),
  new admin.AdminUnauthorized(),
  new admin.AdminTokenRequired('0.0.0.0'),
  new admin.AdminOverloaded(16),
  new admin.AdminBadRequest('body', 'is not JSON'),
  new admin.AdminBodyTooLarge(1_024),
  new admin.AdminBodyTimeout(10_000),
  new admin.AdminEventsFull(8),
  new admin.AdminActionFailed('child restart root/x', 'no process at root/x'),
];

describe('admin error registry', () => {
  it('has unique, stable ADMIN_ codes', () => {
    const codes = Object.values(AdminErrorCode);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^ADMIN_[A-Z_]+$/);
  });

  it('gives every code exactly one exported class, a MoloError named after itself', () => {
    expect(samples.map((error) => error.code).sort()).toEqual(Object.values(AdminErrorCode).sort());
    for (const error of samples) {
      expect(error).toBeInstanceOf(MoloError);
      expect(error.name).toBe(error.constructor.name);
      expect((error.constructor as { code?: string }).code).toBe(error.code);
    }
  });

  it('documents every code with its class in docs/admin.md', () => {
    for (const error of samples) expect(doc).toContain(`| \`${error.code}\` | \`${error.name}\` |`);
  });
});
