/**
 * Ready-made custom types for common extensions; register them by name (`types.register(hstore)`) and
 * the connection binds their OIDs from pg_type at connect.
 */
import { type CustomType, cannotEncode, checkText, malformed } from './codec.js';

/** citext reads and writes as a plain string. */
export const citext: CustomType = {
  name: 'citext',
  decode: (text) => text,
  encode: (value) => {
    if (typeof value !== 'string') throw cannotEncode('citext', value);
    return value;
  },
};

const quoteHstore = (s: string): string => `"${s.replace(/["\\]/g, '\\$&')}"`;

/** Reads one `"..."` token from `text` at `i`; returns [string, next index]. */
function quoted(text: string, i: number): [string, number] {
  let out = '';
  let j = i + 1;
  for (;;) {
    if (j >= text.length) throw malformed('hstore', 'unterminated string');
    const c = text[j]!;
    if (c === '"') return [out, j + 1];
    if (c === '\\') {
      j++;
      if (j >= text.length) throw malformed('hstore', 'unterminated escape');
    }
    out += text[j];
    j++;
  }
}

/** hstore reads as a `Record<string, string | null>` (the server prints every key and value quoted). */
export const hstore: CustomType = {
  name: 'hstore',
  decode: (text) => {
    const out: Record<string, string | null> = Object.create(null) as Record<string, string | null>;
    let i = 0;
    const skipSpaces = (): void => {
      while (text[i] === ' ') i++;
    };
    skipSpaces();
    while (i < text.length) {
      if (text[i] !== '"') throw malformed('hstore', 'expected a quoted key');
      const [key, afterKey] = quoted(text, i);
      i = afterKey;
      if (text.slice(i, i + 2) !== '=>') throw malformed('hstore', "expected '=>'");
      i += 2;
      if (text.startsWith('NULL', i)) {
        out[key] = null;
        i += 4;
      } else if (text[i] === '"') {
        const [value, afterValue] = quoted(text, i);
        out[key] = value;
        i = afterValue;
      } else throw malformed('hstore', 'expected a quoted value or NULL');
      skipSpaces();
      if (text[i] === ',') i++;
      else if (i < text.length) throw malformed('hstore', "expected ','");
      skipSpaces();
    }
    return { ...out };
  },
  encode: (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value) || value instanceof Date) {
      throw cannotEncode('hstore', value, 'pass an object of string values');
    }
    const parts: string[] = [];
    for (const [k, v] of value instanceof Map ? value.entries() : Object.entries(value)) {
      if (typeof k !== 'string') throw cannotEncode('hstore', value, 'keys must be strings');
      if (v === null || v === undefined) parts.push(`${quoteHstore(k)}=>NULL`);
      else if (typeof v === 'string') parts.push(`${quoteHstore(k)}=>${quoteHstore(v)}`);
      else throw cannotEncode('hstore', value, 'values must be strings or null');
    }
    return checkText(parts.join(', '), 'hstore');
  },
};
