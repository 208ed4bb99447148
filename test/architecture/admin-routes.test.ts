/**
 * R7-10: the admin surface's operator routes act only through the public Supervisor,
 * ProgramSupervisor, TaskQueue and stream APIs. Held by their imports: everything a route module
 * takes from another area is part of that area's public surface (what the package's entry points
 * re-export), and no route sends raw messages (`runtime.call`, `system.send`, …) past those APIs.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/run-script.js';

const SRC = join(projectRoot, 'src');
/** The modules that answer operator requests (reads and actions). */
const ROUTE_MODULES = ['admin/observer/actions.ts', 'admin/observer/routes.ts', 'admin/observer/frame.ts', 'admin/task-routes.ts', 'admin/task-http.ts', 'admin/nodes-view.ts', 'admin/stream-routes.ts', 'admin/program-routes.ts'];

const IMPORT = /\bimport\s+(type\s+)?\{([^}]*)\}\s+from\s+'(\.{1,2}\/[^']+)'/g;
const EXPORT_FROM = /\bexport\s+(type\s+)?(\*|\{([^}]*)\})\s+from\s+'(\.{1,2}\/[^']+)'/g;

const toTs = (from: string, specifier: string): string => relative(SRC, resolve(dirname(join(SRC, from)), specifier.replace(/\.js$/, '.ts')));
const names = (list: string): string[] =>
  list
    .split(',')
    .map((part) => part.trim().replace(/^type\s+/, ''))
    .filter((part) => part !== '')
    .map((part) => part.split(/\s+as\s+/)[0]!.trim());

/** File → the names the package's entry points expose from it ('*' for all), following re-exports. */
function publicSurface(): Map<string, Set<string>> {
  const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
  const entries = Object.values(pkg.exports).flatMap((entry) => (typeof entry === 'object' && typeof entry['molo-source'] === 'string' ? [relative(SRC, join(projectRoot, entry['molo-source']))] : []));
  const surface = new Map<string, Set<string>>();
  const expose = (file: string, exposed: readonly string[]): boolean => {
    const set = surface.get(file) ?? new Set<string>();
    const before = set.size;
    for (const name of exposed) set.add(name);
    surface.set(file, set);
    return set.size !== before;
  };
  const queue = [...entries];
  for (const entry of entries) expose(entry, ['*']);
  while (queue.length > 0) {
    const file = queue.pop()!;
    // Only what a fully public file re-exports is followed; a named re-export exposes those names.
    if (!surface.get(file)!.has('*')) continue;
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const match of text.matchAll(EXPORT_FROM)) {
      const target = toTs(file, match[4]!);
      if (expose(target, match[2] === '*' ? ['*'] : names(match[3]!))) queue.push(target);
    }
  }
  return surface;
}

describe('operator routes use only public APIs (R7-10)', () => {
  const surface = publicSurface();

  it('finds the public surface through the entry points', () => {
    expect(surface.get('behaviours/supervisor.ts')?.has('Supervisor')).toBe(true);
    expect(surface.get('behaviours/programs/program-supervisor.ts')?.has('ProgramSupervisor')).toBe(true);
    expect(surface.get('bus/tasks/api.ts')?.has('*')).toBe(true);
    // An internal module is not on it.
    expect(surface.has('behaviours/supervisor-runner.ts')).toBe(false);
  });

  for (const module of ROUTE_MODULES) {
    it(`${module} imports from other areas only what their entry points export`, () => {
      const text = readFileSync(join(SRC, module), 'utf8');
      const outside: string[] = [];
      for (const match of text.matchAll(IMPORT)) {
        const target = toTs(module, match[3]!);
        if (target.startsWith('admin/')) continue;
        const exposed = surface.get(target);
        for (const name of names(match[2]!)) if (exposed === undefined || (!exposed.has('*') && !exposed.has(name))) outside.push(`${name} from ${target}`);
      }
      expect(outside).toEqual([]);
      // No raw messages past the APIs: every call goes through Supervisor, ProgramSupervisor, the queue, Admin.
      expect(text).not.toMatch(/\b(runtime|system|context\.runtime|sources\.runtime)\.(call|send|exit|spawn)\(/);
    });
  }

  it('the action module calls the Supervisor and ProgramSupervisor operations it offers', () => {
    const text = readFileSync(join(SRC, 'admin/observer/actions.ts'), 'utf8');
    for (const call of ['Supervisor.terminateChild', 'Supervisor.restartChild', 'ProgramSupervisor.startProgram', 'ProgramSupervisor.stopProgram', 'ProgramSupervisor.restartProgram', 'Supervisor.startChild', 'Supervisor.whichChildren', 'Supervisor.countChildren']) expect(text).toContain(call);
  });
});
