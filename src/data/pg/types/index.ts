/**
 * Postgres type codecs: which JS value each column becomes, and how each parameter is written.
 *
 * | Postgres                        | JS                                                              |
 * |---------------------------------|-----------------------------------------------------------------|
 * | int2, int4, oid                 | number                                                          |
 * | int8                            | bigint (parameters: bigint, integer number, or digit string)    |
 * | float4, float8                  | number (NaN, ±Infinity, -0 kept)                                |
 * | numeric                         | string, as Postgres prints it ('NaN', 'Infinity' too)           |
 * | bool                            | boolean                                                         |
 * | text, varchar, bpchar, name     | string (no U+0000, no lone surrogates in parameters)            |
 * | bytea                           | Buffer                                                          |
 * | date                            | 'YYYY-MM-DD' string ('YYYY-MM-DD BC', 'infinity', '-infinity')  |
 * | timestamp, timestamptz          | Date (µs floored; timestamp read as UTC; ±infinity as strings)  |
 * | json, jsonb                     | parsed JSON (numbers beyond a double's precision round)         |
 * | uuid                            | lowercase string                                                |
 * | interval, time, inet, money, …  | string as Postgres prints it (TEXT_ONLY_TYPES, text format)     |
 * | arrays of all of the above      | nested JS arrays, NULL elements as null                         |
 * | registered custom types         | whatever their `decode` returns (text format)                   |
 * | anything else                   | string (text format) or Buffer (binary format)                  |
 *
 * Parameters go in text format, except Buffers, which go in binary as they are. A string is always
 * sent as is, for any type (the server's input function parses it); other values are spelled by type
 * when the OID is known, by JS value otherwise (`encodeParam`). A JS array is always an SQL array.
 *
 * Text decoding assumes the session's DateStyle is ISO and client_encoding UTF8 (set at startup).
 */
import { arrayCodec } from './arrays.js';
import { DbError, EncodeFailed, ProtocolError } from '../../errors.js';
import { type CustomType, type Decoder, type PgCodec, cannotEncode, checkText, copyBytes, utf8 } from './codec.js';
import { date, timestamp, timestamptz } from './datetime.js';
import { inferParam } from './infer.js';
import { numeric } from './numeric.js';
import { float4, float8, int2, int4, int8, oid } from './numbers.js';
import { bool, bpchar, bytea, char, json, jsonb, name, text, textOnly, uuid, varchar } from './strings.js';
import { TEXT_ONLY_TYPES } from './oids.js';

export type { CustomType, Decoder, PgCodec } from './codec.js';
export { ArrayOid, Oid, TEXT_ONLY_TYPES } from './oids.js';
export { citext, hstore } from './extensions.js';

const BUILTINS: readonly PgCodec[] = [
  bool, bytea, char, name, int8, int2, int4, text, oid, json, float4, float8,
  bpchar, varchar, date, timestamp, timestamptz, numeric, uuid, jsonb,
  ...TEXT_ONLY_TYPES.map(([typeName, oidValue, arrayOid]) => textOnly(oidValue, typeName, arrayOid)),
];

/** Wraps an application's codec: its failures become the typed errors a query fails with. */
function customCodec(type: CustomType, oidValue: number): PgCodec {
  return {
    oid: oidValue,
    name: type.name,
    decodeText: (buf, start, end) => {
      try {
        return type.decode(utf8(buf, start, end));
      } catch (cause) {
        if (cause instanceof DbError) throw cause;
        throw new ProtocolError(`cannot decode ${type.name}: its decoder threw`, { cause });
      }
    },
    encodeText: (v) => {
      let text: unknown;
      try {
        text = type.encode(v);
      } catch (cause) {
        if (cause instanceof DbError) throw cause;
        throw new EncodeFailed(`${type.name}: its encoder threw`, { cause });
      }
      // Whatever it returned must still be text Postgres can hold.
      if (typeof text !== 'string') throw cannotEncode(type.name, text, 'its encoder must return a string');
      return checkText(text, type.name);
    },
  };
}

/** Binary columns of types we have no codec for stay raw bytes. */
const rawBinary: Decoder = copyBytes;

export class PgTypes {
  private readonly codecs = new Map<number, PgCodec>();
  private readonly textDecoders = new Map<number, Decoder>();
  private readonly binaryDecoders = new Map<number, Decoder>();
  private readonly custom = new Map<string, CustomType>();
  private readonly pending = new Set<string>();

  constructor() {
    for (const codec of BUILTINS) this.add(codec);
  }

  /** Registers a codec (and its array codec when it names an `arrayOid`), replacing any for the same OID. */
  add(codec: PgCodec): void {
    this.set(codec.oid, codec);
    if (codec.arrayOid !== undefined && codec.arrayOid !== 0) this.set(codec.arrayOid, arrayCodec(codec, codec.arrayOid));
  }

  private set(oidValue: number, codec: PgCodec): void {
    this.codecs.set(oidValue, codec);
    this.textDecoders.delete(oidValue);
    this.binaryDecoders.delete(oidValue);
  }

  get(oidValue: number): PgCodec | undefined {
    return this.codecs.get(oidValue);
  }

  /** Whether columns of this type can be requested in binary format. */
  hasBinary(oidValue: number): boolean {
    return this.codecs.get(oidValue)?.decodeBinary !== undefined;
  }

  /** Column decoder; unknown OIDs decode as UTF-8 strings (text) or Buffers (binary). Cached per (oid, format). */
  decoder(oidValue: number, format: 0 | 1): Decoder {
    const cache = format === 0 ? this.textDecoders : this.binaryDecoders;
    let d = cache.get(oidValue);
    if (d === undefined) {
      const codec = this.codecs.get(oidValue);
      if (format === 0) d = codec?.decodeText ?? utf8;
      // A type without a binary decoder is never asked for in binary (hasBinary); if it comes anyway, raw bytes.
      else d = codec?.decodeBinary ?? rawBinary;
      cache.set(oidValue, d);
    }
    return d;
  }

  /**
   * A bind parameter: null for SQL NULL, a string for text format, a Buffer for binary format.
   * Buffers always go binary as they are (bytea's bytes, or a type's binary form), whatever the OID, so
   * the unnamed first use (oid 0) and a prepared statement (known OIDs) send the same thing. Everything
   * else goes text, through the type's codec, or by its JS value when `oid` is 0 or unknown.
   */
  encodeParam(value: unknown, oidValue: number): string | Buffer | null {
    if (value === null || value === undefined) return null;
    if (oidValue === 0 || value instanceof Uint8Array) return inferParam(value);
    const codec = this.codecs.get(oidValue);
    return codec === undefined ? inferParam(value) : codec.encodeText(value);
  }

  /** Declares a custom type by name; its OID is bound by the connection (pg_type lookup) via `bindOid`. */
  register(type: CustomType): void {
    this.custom.set(type.name, type);
    this.pending.add(type.name);
  }

  /** Custom type names registered but not yet bound to an OID. */
  pendingNames(): readonly string[] {
    return [...this.pending];
  }

  /** Binds a registered custom type to its OID (and its array type's, 0 if none). */
  bindOid(typeName: string, oidValue: number, arrayOid: number): void {
    const type = this.custom.get(typeName);
    if (type === undefined) return;
    this.pending.delete(typeName);
    this.add({ ...customCodec(type, oidValue), arrayOid });
  }
}
