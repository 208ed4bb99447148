import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ActorBehaviour, HandlerFunction } from '../behaviour.js';
import { InvalidPlacement } from '../errors.js';

export type { BehaviourModule } from './types.js';
import type { BehaviourModule } from './types.js';
import { importInHost } from './source-bundle.js';

/**
 * Names a behaviour by module and export. `moduleUrl` is a URL (`new URL('./worker.js',
 * import.meta.url)`), an absolute path, or a package specifier; relative paths are refused because
 * they would resolve differently in the host.
 */
export function behaviourModule<S = unknown>(moduleUrl: string | URL, exportName = 'default', ...args: unknown[]): BehaviourModule<S> {
  return { moduleUrl: resolveModuleUrl(moduleUrl), exportName: checkExportName(exportName), args };
}

function resolveModuleUrl(moduleUrl: string | URL): string {
  if (moduleUrl instanceof URL) return moduleUrl.href;
  if (typeof moduleUrl !== 'string' || moduleUrl.length === 0) {
    throw new InvalidPlacement('moduleUrl', 'must be a URL, an absolute path or a package specifier');
  }
  if (moduleUrl.startsWith('./') || moduleUrl.startsWith('../')) {
    throw new InvalidPlacement('moduleUrl', `'${moduleUrl}' is relative; use new URL('${moduleUrl}', import.meta.url)`);
  }
  if (isAbsolute(moduleUrl)) return pathToFileURL(moduleUrl).href;
  return moduleUrl;
}

function checkExportName(exportName: string): string {
  if (typeof exportName !== 'string' || exportName.length === 0) {
    throw new InvalidPlacement('exportName', 'must be a non-empty string');
  }
  return exportName;
}

/** Checks a module spec that came from a caller (or over the wire) before anything imports it. */
export function checkBehaviourModule(spec: BehaviourModule): BehaviourModule {
  if (typeof spec !== 'object' || spec === null || !Array.isArray(spec.args)) {
    throw new InvalidPlacement('behaviour', 'must be made with behaviourModule(moduleUrl, exportName, ...args)');
  }
  resolveModuleUrl(spec.moduleUrl);
  checkExportName(spec.exportName);
  return spec;
}

/** Imports the module and makes the behaviour; throws InvalidPlacement when the export is not one. */
export async function loadBehaviour(
  moduleUrl: string,
  exportName: string,
  args: readonly unknown[],
): Promise<ActorBehaviour<unknown> | HandlerFunction<unknown>> {
  const module = await importInHost(moduleUrl);
  const exported = module[exportName];
  if (exported === undefined) throw new InvalidPlacement('exportName', `module ${moduleUrl} has no export '${exportName}'`);
  const made = typeof exported === 'function' ? await (exported as (...args: unknown[]) => unknown)(...args) : exported;
  if (typeof made === 'function') return made as HandlerFunction<unknown>;
  if (typeof made === 'object' && made !== null && typeof (made as ActorBehaviour).handle === 'function') {
    return made as ActorBehaviour<unknown>;
  }
  throw new InvalidPlacement(
    'exportName',
    `export '${exportName}' of ${moduleUrl} is neither an ActorBehaviour nor a function returning one`,
  );
}
