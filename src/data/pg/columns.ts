/**
 * Result shapes: the column names, the decoder of each column (by type OID and format) and the
 * FieldInfo list a Result carries. Built once per RowDescription, or once per prepared statement
 * and format, so decoding a row is one pass with no lookups.
 */
import type { RowDescriptionMessage } from 'pg-protocol/dist/messages.js';
import type { FieldInfo } from '../values.js';
import type { ColumnDecoder } from './frames.js';
import type { ColumnDesc, ResultShape } from './result-shape.js';
import type { PgTypes } from './types/index.js';

export const NO_COLUMNS: ResultShape = Object.freeze({ names: [], decoders: [], fields: [] });

export function columnsOf(message: RowDescriptionMessage): ColumnDesc[] {
  const columns: ColumnDesc[] = new Array(message.fields.length);
  for (let i = 0; i < columns.length; i++) {
    const field = message.fields[i]!;
    columns[i] = { name: field.name, typeOid: field.dataTypeID };
  }
  return columns;
}

/** The shape of a RowDescription as sent (its own format codes). */
export function shapeOfDescription(message: RowDescriptionMessage, types: PgTypes): ResultShape {
  const n = message.fields.length;
  const names: string[] = new Array(n);
  const decoders: ColumnDecoder[] = new Array(n);
  const fields: FieldInfo[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const field = message.fields[i]!;
    names[i] = field.name;
    decoders[i] = types.decoder(field.dataTypeID, field.format === 'binary' ? 1 : 0);
    fields[i] = { name: field.name, typeOid: field.dataTypeID };
  }
  return { names, decoders, fields };
}

/** The shape of a described statement's columns in one format. */
export function shapeOfColumns(columns: readonly ColumnDesc[], format: 0 | 1, types: PgTypes): ResultShape {
  const n = columns.length;
  const names: string[] = new Array(n);
  const decoders: ColumnDecoder[] = new Array(n);
  const fields: FieldInfo[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const column = columns[i]!;
    names[i] = column.name;
    decoders[i] = types.decoder(column.typeOid, format);
    fields[i] = { name: column.name, typeOid: column.typeOid };
  }
  return { names, decoders, fields };
}

/** Whether every column can be read in binary. */
export function allBinary(columns: readonly ColumnDesc[], types: PgTypes): boolean {
  for (const column of columns) if (!types.hasBinary(column.typeOid)) return false;
  return true;
}
