/**
 * Text and JSON over a KV store, whose values are bytes: UTF-8 for text, UTF-8 JSON for documents.
 * Helpers, not a format the store knows about: any backend, any reader in another language.
 */
import type { DataContext } from '../context.js';
import { KvInvalidArgument } from './errors.js';
import type { KvEntry, KvSetOptions, KvStore } from './store.js';

export const encodeText = (text: string): Buffer => Buffer.from(text, 'utf8');
export const decodeText = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

export function encodeJson(value: unknown): Buffer {
  const text = JSON.stringify(value);
  if (text === undefined) throw new KvInvalidArgument('value', 'has no JSON form (undefined, a function or a symbol)');
  return encodeText(text);
}

/** Parses stored JSON; bytes that are not JSON are a KvInvalidArgument (what was stored was not a document). */
export function decodeJson<T = unknown>(bytes: Uint8Array): T {
  try {
    return JSON.parse(decodeText(bytes)) as T;
  } catch (error) {
    throw new KvInvalidArgument('value', `stored bytes are not JSON (${(error as Error).message})`);
  }
}

export async function getText(store: KvStore, key: string, ctx?: DataContext): Promise<string | undefined> {
  const entry = await store.get(key, ctx);
  return entry === undefined ? undefined : decodeText(entry.value);
}

export function setText(store: KvStore, key: string, text: string, options?: KvSetOptions, ctx?: DataContext): Promise<number> {
  return store.set(key, encodeText(text), options, ctx);
}

export async function getJson<T = unknown>(store: KvStore, key: string, ctx?: DataContext): Promise<T | undefined> {
  const entry = await store.get(key, ctx);
  return entry === undefined ? undefined : decodeJson<T>(entry.value);
}

/** The entry with its value parsed, for read-modify-`setIfVersion` loops. */
export async function getJsonEntry<T = unknown>(store: KvStore, key: string, ctx?: DataContext): Promise<{ value: T; version: number } | undefined> {
  const entry: KvEntry | undefined = await store.get(key, ctx);
  return entry === undefined ? undefined : { value: decodeJson<T>(entry.value), version: entry.version };
}

export function setJson(store: KvStore, key: string, value: unknown, options?: KvSetOptions, ctx?: DataContext): Promise<number> {
  return store.set(key, encodeJson(value), options, ctx);
}
