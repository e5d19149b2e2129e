// Probes of what works, not only of what runs: a name asked of the cluster DNS, a TCP port of a pod
// or a Service reached from the machine. Each asks as a pod does, from the network namespace of a pod
// that runs there (no pod is started for it), or from the machine's own when none runs. Each is
// bounded (2 s a question, all asked at once) and uses only bash, coreutils and iproute2, which every
// Debian machine has: no dig, no nc on the machines.
import { sh, type Command } from '../shell.ts';
import { probe } from './probe.ts';

/** How long one question waits for its answer, in seconds. */
export const FUNCTION_TIMEOUT_S = 2;

/** A DNS query for `name`'s A records, as bytes on the wire (RFC 1035), with this transaction id. */
export function dnsQuery(name: string, id: number): Buffer {
  const labels = name.replace(/\.$/, '').split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')]));
  // id, flags (recursion desired), 1 question, no answers, no authority, no additional.
  const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

/** Bytes as a printf format of octal escapes (`\001\002`): dash's and bash's printf both read them. */
export function printfBytes(bytes: Buffer): string {
  return [...bytes].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
}

/** What the cluster DNS answered: its response code and A records, or why nothing came back. */
export type DnsAnswer =
  | { answered: true; rcode: number; addresses: string[] }
  | { answered: false; why: string };

const RCODES: Record<number, string> = { 0: 'NOERROR', 1: 'FORMERR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 4: 'NOTIMP', 5: 'REFUSED' };

/** A response code as dig names it (`NXDOMAIN`). */
export function rcodeName(rcode: number): string {
  return RCODES[rcode] ?? `rcode ${rcode}`;
}

/** Where a function probe asked from: the network namespace of a pod of the machine (`cni-...`), or `host`. */
export type AskedFrom = string;

/** The first line of a function probe's answer (`from NAME`) and the rest. */
function splitFrom(text: string): { from: AskedFrom; rest: string } {
  const [first, ...rest] = text.split('\n');
  const from = /^from (\S+)$/.exec(first ?? '')?.[1];
  return from ? { from, rest: rest.join('\n') } : { from: 'host', rest: text };
}

/** A line bash or dd said when the question could not be asked or answered (`bash: connect: Network is unreachable`): its reason, in lower case. */
function errorOf(text: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith('dd: ') || l.startsWith('bash: ') || l.startsWith('sh: '));
  return line === undefined ? undefined : line.slice(line.lastIndexOf(': ') + 2).toLowerCase();
}

/** The A records of a DNS reply (hex bytes as `od -An -tx1` prints them, or the error of the socket); the query's id must match. */
export function parseDnsReply(text: string, id: number): DnsAnswer {
  // No route to the address, or an ICMP "port unreachable" (nothing listens there, or a Service without endpoints).
  const failed = errorOf(text);
  if (failed) return { answered: false, why: failed };
  const bytes = Buffer.from(text.replace(/\s+/g, ''), 'hex');
  if (bytes.length === 0) return { answered: false, why: `no answer within ${FUNCTION_TIMEOUT_S} s` };
  if (bytes.length < 12 || bytes.readUInt16BE(0) !== id) return { answered: false, why: `a reply that is not an answer to the query (${bytes.length} bytes)` };
  const rcode = bytes[3]! & 0x0f;
  const questions = bytes.readUInt16BE(4);
  const answers = bytes.readUInt16BE(6);
  let at = 12;
  const skipName = () => {
    while (at < bytes.length) {
      const len = bytes[at]!;
      // A compression pointer ends the name in two bytes.
      if ((len & 0xc0) === 0xc0) return void (at += 2);
      at += 1 + len;
      if (len === 0) return;
    }
  };
  for (let q = 0; q < questions; q++) {
    skipName();
    at += 4;
  }
  const addresses: string[] = [];
  for (let a = 0; a < answers && at + 10 <= bytes.length; a++) {
    skipName();
    const type = bytes.readUInt16BE(at);
    const length = bytes.readUInt16BE(at + 8);
    at += 10;
    if (type === 1 && length === 4 && at + 4 <= bytes.length) addresses.push([...bytes.subarray(at, at + 4)].join('.'));
    at += length;
  }
  return { answered: true, rcode, addresses };
}

// printf writes its output in pieces, and each write to a UDP socket is a datagram of its own: dd
// gathers the query (iflag=fullblock: up to EOF) and sends it in one.
// A fixed id: one question per batch, and a reply to another query cannot reach this socket
// (a connected UDP socket takes datagrams from its peer alone).
const QUERY_ID = 0x4877;

/**
 * Runs the bash `script` with `args` in the network namespace of a pod of the machine (the first
 * CNI one with a default route: a pod's view of the cluster), else in the machine's own; says which
 * first (`from NAME`). stderr joins stdout: what bash says when it cannot connect is the answer.
 */
export function asAPod(script: string, args: readonly string[]): Command {
  return sh`ns=; for n in $(ip netns list 2>/dev/null | awk ${'$1 ~ /^cni-/ { print $1 }'}); do if ip -n "$n" route show default 2>/dev/null | grep -q .; then ns=$n; break; fi; done
if [ -n "$ns" ]; then echo "from $ns"; ip netns exec "$ns" bash -c ${script} sh ${args} 2>&1; else echo "from host"; bash -c ${script} sh ${args} 2>&1; fi; :`;
}

/** What a DNS query got, and where it was sent from. */
export type AskedDns = DnsAnswer & { from: AskedFrom };

/** A DNS query for `name` sent to `server` port 53 over UDP, as a pod of the machine sends it; the A records it answered. */
export const dnsLookup = probe('dns-lookup', (server: string, name: string) =>
  asAPod('exec 3<>"/dev/udp/$1/53" && printf "$2" | dd bs=4096 iflag=fullblock count=1 2>/dev/null >&3 && timeout "$3" dd bs=4096 count=1 status=none <&3 | od -An -v -tx1',
    [server, printfBytes(dnsQuery(name, QUERY_ID)), String(FUNCTION_TIMEOUT_S)]),
(a): AskedDns => {
  const { from, rest } = splitFrom(a.stdout);
  return { ...parseDnsReply(rest, QUERY_ID), from };
});

/** Whether a TCP port answered: `address:port`, and why not when it did not. */
export interface TcpReach {
  target: string;
  ok: boolean;
  why?: string;
}

/** What TCP connects got, and where they were made from. */
export interface AskedReach {
  from: AskedFrom;
  results: TcpReach[];
}

/** `ADDRESS:PORT CODE MESSAGE` lines of the tcpReach probe, one a target. */
export function parseTcpReach(text: string): TcpReach[] {
  return text.split('\n').filter((l) => /^\S+:\d+ \d+/.test(l)).map((l) => {
    const [target, code, ...why] = l.split(' ');
    if (Number(code) === 0) return { target: target!, ok: true };
    return { target: target!, ok: false, why: Number(code) === 124 ? `no answer within ${FUNCTION_TIMEOUT_S} s` : why.join(' ') || `exit ${code}` };
  });
}

// Each target at once, each bounded: one unreachable address costs the batch 2 s, not 2 s each.
const REACH = 'for t; do ( e=$(timeout "$T" bash -c \'exec 3<>"/dev/tcp/${0%:*}/${0##*:}"\' "$t" 2>&1); c=$?; e=${e%%"$N"*}; echo "$t $c ${e##*: }" ) & done; wait';

/** A TCP connect to each `address:port`, as a pod of the machine makes it (through kube-proxy's rules for a Service address). */
export const tcpReach = probe('tcp-reach', (targets: readonly string[]) => asAPod(`T=${FUNCTION_TIMEOUT_S}; N='\n'; ${REACH}`, targets),
(a): AskedReach => {
  const { from, rest } = splitFrom(a.stdout);
  return { from, results: parseTcpReach(rest) };
});
