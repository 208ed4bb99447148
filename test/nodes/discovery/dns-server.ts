/**
 * A DNS server the test controls, on a loopback UDP port: answers A and SRV questions from a record
 * table the test changes between rounds, NXDOMAIN for anything else. Enough of RFC 1035 for Node's
 * resolver (one question, uncompressed names in answers but the question's own pointer).
 */
import { createSocket, type Socket } from 'node:dgram';

export interface DnsRecords {
  a: Map<string, string[]>;
  srv: Map<string, { target: string; port: number }[]>;
}

export interface TestDnsServer {
  readonly address: string;
  readonly records: DnsRecords;
  readonly queries: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_SRV = 33;

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').filter((part) => part.length > 0);
  return Buffer.concat([...parts.map((part) => Buffer.concat([Buffer.from([part.length]), Buffer.from(part, 'ascii')])), Buffer.from([0])]);
}

function readQuestion(packet: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let offset = 12;
  while (packet[offset] !== 0) {
    const length = packet[offset]!;
    labels.push(packet.toString('ascii', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  offset += 1;
  return { name: labels.join('.').toLowerCase(), type: packet.readUInt16BE(offset), end: offset + 4 };
}

function answer(type: number, rdata: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // the question's name
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // IN
  head.writeUInt32BE(0, 6); // TTL 0: every round asks again
  head.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([head, rdata]);
}

function respond(packet: Buffer, records: DnsRecords, queries: string[]): Buffer {
  const { name, type, end } = readQuestion(packet);
  queries.push(`${type === TYPE_SRV ? 'SRV' : type === TYPE_A ? 'A' : type} ${name}`);
  const answers: Buffer[] = [];
  if (type === TYPE_A) {
    for (const ip of records.a.get(name) ?? []) answers.push(answer(TYPE_A, Buffer.from(ip.split('.').map(Number))));
  } else if (type === TYPE_SRV) {
    for (const { target, port } of records.srv.get(name) ?? []) {
      const fixed = Buffer.alloc(6);
      fixed.writeUInt16BE(10, 0);
      fixed.writeUInt16BE(10, 2);
      fixed.writeUInt16BE(port, 4);
      answers.push(answer(TYPE_SRV, Buffer.concat([fixed, encodeName(target)])));
    }
  }
  const known = records.a.has(name) || records.srv.has(name);
  const header = Buffer.alloc(12);
  packet.copy(header, 0, 0, 2);
  header.writeUInt16BE(known ? 0x8180 : 0x8183, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  return Buffer.concat([header, packet.subarray(12, end), ...answers]);
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const socket: Socket = createSocket('udp4');
  const records: DnsRecords = { a: new Map(), srv: new Map() };
  const queries: string[] = [];
  socket.on('message', (packet, peer) => {
    try {
      socket.send(respond(packet, records, queries), peer.port, peer.address);
    } catch {
      // A packet this small server cannot read gets no answer; the resolver times out.
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
