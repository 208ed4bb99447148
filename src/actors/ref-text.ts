/**
 * A ref read back from its text, `<node.id.creation>` (what `String(ref)` and `JSON.stringify`
 * write): the way to rebuild a ref that went through JSON, a database row or a URL. The result is
 * an ordinary ref: every operation treats it as the ref spawn returned (they compare by value).
 */
import { InvalidRef } from './errors.js';
import { Ref } from './ref.js';

/** Longest text read: a node name (well under 400 characters) plus two numbers. */
export const MAX_REF_TEXT_LENGTH = 512;
const MAX_CREATION = 0xffff_ffff;
// Canonical decimals only (no sign, no leading zeros), so each ref has one text.
const NUMBER = /^(?:0|[1-9][0-9]{0,15})$/;

/** Parses `<node.id.creation>`; throws InvalidRef. The node may contain dots: id and creation are the last two fields. */
export function parseRef(text: string): Ref {
  if (typeof text !== 'string') throw new InvalidRef(text, 'not a string');
  if (text.length > MAX_REF_TEXT_LENGTH) throw new InvalidRef(text, `longer than ${MAX_REF_TEXT_LENGTH} characters`);
  if (!text.startsWith('<') || !text.endsWith('>')) throw new InvalidRef(text, 'must be <node.id.creation>');
  const body = text.slice(1, -1);
  const last = body.lastIndexOf('.');
  const middle = last < 0 ? -1 : body.lastIndexOf('.', last - 1);
  if (middle <= 0) throw new InvalidRef(text, 'must be <node.id.creation>');
  const idText = body.slice(middle + 1, last);
  const creationText = body.slice(last + 1);
  if (!NUMBER.test(idText) || !NUMBER.test(creationText)) throw new InvalidRef(text, 'id and creation must be decimal integers');
  const id = Number(idText);
  const creation = Number(creationText);
  if (id > Number.MAX_SAFE_INTEGER) throw new InvalidRef(text, 'id is past Number.MAX_SAFE_INTEGER');
  if (creation > MAX_CREATION) throw new InvalidRef(text, 'creation is past 2^32 - 1');
  return new Ref(body.slice(0, middle), id, creation);
}
