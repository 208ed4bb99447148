/**
 * The generated parts of docs/operations.md, read from the code so that the page cannot drift:
 * - every metric: each exported `*Metrics` class in src/ built on a fresh registry (the metrics it
 *   registers, with their help and labels), and each other `new prom.Counter|Gauge|Histogram|Summary`
 *   read from the syntax tree (a `${prefix}` in a name is the default prefix, `molo_`);
 * - every cap and default: each exported `*_LIMITS`, `*_CAPS`, `*_CEILINGS` and `*_DEFAULTS` object
 *   and each exported numeric `MAX_*`, `DEFAULT_*`, `*_CAP` and `*_LIMIT*` constant in src/, read by
 *   importing its module (a `[low, high]` pair is the range an option may take).
 * test/docs/operations.test.ts fails when the page is stale: `npx tsx scripts/gen-ops-reference.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as prom from 'prom-client';
import ts from 'typescript';

const ROOT = new URL('..', import.meta.url).pathname;
const SRC = join(ROOT, 'src');
const METRIC_KINDS = new Set(['Counter', 'Gauge', 'Histogram', 'Summary']);
const CAP_NAME = /^export const ([A-Z][A-Z0-9_]*_(?:LIMITS|CAPS|CEILINGS|DEFAULTS)|(?:MAX|DEFAULT)_[A-Z0-9_]+|[A-Z][A-Z0-9_]*_(?:CAP|LIMIT|LIMIT_BYTES))\b/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []))
    .sort();
}

export interface MetricRow {
  readonly name: string;
  readonly type: string;
  readonly labels: string;
  readonly help: string;
  readonly file: string;
}

/** A name or help text: literals as written, `${prefix}` as `molo_`, anything else as `<expression>`. */
function textOf(node: ts.Expression, source: ts.SourceFile, constants: ReadonlyMap<string, string>): string {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    return (
      node.head.text +
      node.templateSpans.map((span) => (span.expression.getText(source) === 'prefix' ? 'molo_' : `<${span.expression.getText(source)}>`) + span.literal.text).join('')
    );
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) return textOf(node.left, source, constants) + textOf(node.right, source, constants);
  return constants.get(node.getText(source)) ?? `<${node.getText(source)}>`;
}

/** String constants of a file, `NAME` and `NAME.key` (for help texts kept in an object). */
function stringConstants(source: ts.SourceFile): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
      let value = node.initializer;
      while (ts.isAsExpression(value) || ts.isSatisfiesExpression(value) || ts.isParenthesizedExpression(value)) value = value.expression;
      if (ts.isCallExpression(value) && value.arguments.length === 1) value = value.arguments[0]!;
      if (ts.isStringLiteral(value) || ts.isNoSubstitutionTemplateLiteral(value)) found.set(node.name.text, value.text);
      else if (ts.isObjectLiteralExpression(value)) {
        for (const property of value.properties) {
          if (ts.isPropertyAssignment(property) && (ts.isStringLiteral(property.initializer) || ts.isNoSubstitutionTemplateLiteral(property.initializer))) {
            found.set(`${node.name.text}.${property.name.getText(source)}`, property.initializer.text);
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The metrics each exported `*Metrics` class registers, by the file it is in. */
async function classMetricRows(files: readonly string[]): Promise<{ rows: MetricRow[]; covered: Set<string> }> {
  const rows: MetricRow[] = [];
  const covered = new Set<string>();
  for (const path of files) {
    const file = relative(ROOT, path);
    const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      // Classes only: a `fooMetrics(registry)` accessor beside one registers the same metrics.
      if (!/^[A-Z]\w*Metrics$/.test(name) || typeof value !== 'function') continue;
      const registry = new prom.Registry();
      try {
        new (value as new (registry: prom.Registry, prefix: string) => unknown)(registry, 'molo_');
      } catch {
        continue;
      }
      covered.add(file);
      for (const metric of registry.getMetricsAsArray()) {
        const { name: metricName, help, labelNames } = metric as unknown as { name: string; help: string; labelNames?: readonly string[] };
        const type = String((await (metric as unknown as { get(): Promise<{ type: string }> }).get()).type);
        if (rows.some((row) => row.name === metricName)) continue;
        rows.push({ name: metricName, type, labels: (labelNames ?? []).join(', '), help, file });
      }
    }
  }
  return { rows, covered };
}

export async function metricRows(): Promise<MetricRow[]> {
  const files = sourceFiles(SRC).filter((path) => /\b(?:Counter|Gauge|Histogram|Summary)\s*\(/.test(readFileSync(path, 'utf8')));
  const fromClasses = await classMetricRows(files);
  const known = new Set(fromClasses.rows.map((row) => row.name));
  const rows: MetricRow[] = [...fromClasses.rows];
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const constants = stringConstants(source);
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node)) {
        const callee = node.expression.getText(source).replace(/^prom\./, '');
        const options = node.arguments?.[0];
        if (METRIC_KINDS.has(callee) && options !== undefined && ts.isObjectLiteralExpression(options)) {
          const property = (key: string): ts.Expression | undefined => {
            const found = options.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === key);
            return found !== undefined && ts.isPropertyAssignment(found) ? found.initializer : undefined;
          };
          const name = property('name');
          const nameText = name === undefined ? undefined : textOf(name, source, constants);
          // A class built above named it exactly; a name made at run time in such a file is one of those.
          const builtAbove = nameText !== undefined && (known.has(nameText) || (nameText.includes('<') && fromClasses.covered.has(relative(ROOT, path))));
          if (name !== undefined && !builtAbove) {
            const labelsNode = property('labelNames');
            const labels =
              labelsNode === undefined
                ? ''
                : ts.isArrayLiteralExpression(labelsNode)
                  ? labelsNode.elements.map((element) => textOf(element as ts.Expression, source, constants)).join(', ')
                  : `<${labelsNode.getText(source)}>`;
            const help = property('help');
            rows.push({
              name: nameText!,
              type: callee.toLowerCase(),
              labels,
              help: help === undefined ? '' : textOf(help, source, constants),
              file: relative(ROOT, path),
            });
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return rows.sort((a, b) => a.name.localeCompare(b.name) || a.file.localeCompare(b.file));
}

export interface CapRow {
  readonly constant: string;
  readonly key: string;
  readonly value: string;
  readonly file: string;
}

const formatNumber = (value: number): string => (Number.isInteger(value) ? value.toLocaleString('en-US') : String(value));

function formatValue(value: unknown): string {
  if (typeof value === 'number') return formatNumber(value);
  if (Array.isArray(value) && value.length === 2 && value.every((item) => typeof item === 'number')) return `${formatNumber(value[0] as number)} … ${formatNumber(value[1] as number)}`;
  return JSON.stringify(value);
}

function flatten(prefix: string, value: unknown, into: [string, string][]): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(prefix === '' ? key : `${prefix}.${key}`, inner, into);
  } else into.push([prefix, formatValue(value)]);
}

/** The files that export a caps constant, and the constants' names. */
export function capConstants(): { readonly file: string; readonly constant: string }[] {
  return sourceFiles(SRC).flatMap((path) => [...readFileSync(path, 'utf8').matchAll(CAP_NAME)].map((match) => ({ file: relative(ROOT, path), constant: match[1]! })));
}

export async function capRows(): Promise<CapRow[]> {
  const rows: CapRow[] = [];
  for (const { file, constant } of capConstants()) {
    const module = (await import(pathToFileURL(join(ROOT, file)).href)) as Record<string, unknown>;
    const value = module[constant];
    // A DEFAULT_ name may be a table name or a host: only numbers and objects of them are caps.
    if (typeof value !== 'number' && (value === null || typeof value !== 'object')) continue;
    const entries: [string, string][] = [];
    flatten('', value, entries);
    for (const [key, value] of entries) rows.push({ constant, key, value, file });
  }
  return rows;
}

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function renderMetrics(rows: readonly MetricRow[]): string {
  return [
    '| metric | type | labels | help | defined in |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| \`${row.name}\` | ${row.type} | ${row.labels === '' ? '' : cell(row.labels)} | ${cell(row.help)} | \`${row.file}\` |`),
  ].join('\n');
}

export function renderCaps(rows: readonly CapRow[]): string {
  return [
    '| constant | key | value | defined in |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => `| \`${row.constant}\` | ${row.key === '' ? '' : `\`${row.key}\``} | ${cell(row.value)} | \`${row.file}\` |`),
  ].join('\n');
}

/** `page` with the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` replaced. */
export function withGenerated(page: string, name: string, body: string): string {
  const open = `<!-- generated:${name} -->`;
  const close = `<!-- /generated:${name} -->`;
  const start = page.indexOf(open);
  const end = page.indexOf(close);
  if (start < 0 || end < start) throw new Error(`docs/operations.md has no ${open} … ${close} block`);
  return `${page.slice(0, start + open.length)}\n${body}\n${page.slice(end)}`;
}

export const OPERATIONS_PAGE = join(ROOT, 'docs', 'operations.md');

/** docs/operations.md as the code says it should read. */
export async function renderOperationsPage(page = readFileSync(OPERATIONS_PAGE, 'utf8')): Promise<string> {
  return withGenerated(withGenerated(page, 'metrics', renderMetrics(await metricRows())), 'caps', renderCaps(await capRows()));
}
