/**
 * The getting-started app's data model: one table of guests, declared once; the row type is
 * inferred from the fields (no code generation). A module of the example, not a program.
 */
import { defineModel, field, NOW, type RowOf } from 'molo/data/orm';

export const Guest = defineModel('guests', {
  id: field.int64().primaryKey().autoIncrement(),
  name: field.string(80),
  greeting: field.text(),
  createdAt: field.time().default(NOW),
});

/** `{ id: bigint; name: string; greeting: string; createdAt: Date }` */
export type GuestRow = RowOf<typeof Guest>;
