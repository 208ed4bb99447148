// Leader leases with fencing tokens, in a shared SQL KV store.
export * from './errors.js';
