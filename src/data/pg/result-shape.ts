/**
 * The types the statement cache and the result-shape builders share: a column as RowDescription
 * describes it, and a result's decoding shape. In a file of their own so that `columns.ts` (which
 * builds shapes) and `statement-cache.ts` (which keeps them per statement) need not import each other.
 */
import type { FieldInfo } from '../values.js';
import type { RowShape } from './frames.js';

/** What RowDescription says of one column. */
export interface ColumnDesc {
  readonly name: string;
  readonly typeOid: number;
}

/** The names and decoders a row is decoded with, plus the FieldInfo list a Result carries. */
export interface ResultShape extends RowShape {
  readonly fields: readonly FieldInfo[];
}
