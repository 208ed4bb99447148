/** Built-in type OIDs (pg_type.oid; fixed across Postgres versions) and their array types. */
export const Oid = {
  bool: 16,
  bytea: 17,
  char: 18,
  name: 19,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  unknown: 705,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  uuid: 2950,
  jsonb: 3802,
} as const;

/** Array OID of each built-in element type. */
export const ArrayOid = {
  bool: 1000,
  bytea: 1001,
  char: 1002,
  name: 1003,
  int2: 1005,
  int4: 1007,
  text: 1009,
  varchar: 1015,
  bpchar: 1014,
  int8: 1016,
  float4: 1021,
  float8: 1022,
  oid: 1028,
  json: 199,
  timestamp: 1115,
  date: 1182,
  timestamptz: 1185,
  numeric: 1231,
  uuid: 2951,
  jsonb: 3807,
} as const;

/**
 * Types read as Postgres prints them (strings), text format only; registered so their arrays parse into
 * string arrays instead of arriving as one literal. [name, oid, array oid].
 */
export const TEXT_ONLY_TYPES: readonly (readonly [string, number, number])[] = [
  ['interval', 1186, 1187],
  ['time', 1083, 1183],
  ['timetz', 1266, 1270],
  ['inet', 869, 1041],
  ['cidr', 650, 651],
  ['macaddr', 829, 1040],
  ['macaddr8', 774, 775],
  ['money', 790, 791],
  ['bit', 1560, 1561],
  ['varbit', 1562, 1563],
  ['xml', 142, 143],
  ['regclass', 2205, 2210],
  ['regtype', 2206, 2211],
  ['regproc', 24, 1008],
  ['xid', 28, 1011],
  ['tsvector', 3614, 3643],
  ['tsquery', 3615, 3645],
  ['jsonpath', 4072, 4073],
];
