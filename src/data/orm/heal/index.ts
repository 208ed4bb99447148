// Healer: classify (pure), resolve against models and schema, journal, apply; SQLite table rebuild.
export { classify, isHealPlan, triggerCode, type Fatal, type HealPlan, type HealPlanKind } from './classify.js';
export { HealJournal, journalText, type HealRecord } from './journal.js';
export { alterTypesSql, checkWidening, DEFAULT_TEXT_THRESHOLD, resolveHeal, type HealAction, type WidenedColumn } from './resolve.js';
export { Healer, HEALER_DEFAULTS, HEALER_LIMITS, type HealerOptions } from './healer.js';
export { rebuildStatements, rebuildTable, type RebuildOptions, type RebuildResult } from './sqlite-rebuild.js';
export { columnNameOf, dropNotNull, parseCreateTable, rewriteCreateTable, type CreateTableEdit } from './sqlite-create-sql.js';
