// Where the demo and the tests find the CoreDNS source archive for the offline build: the pristine
// upstream copy in ../shared/third_party beside the checkout (the product itself never looks there;
// it reads dns.source of cluster.yaml). Without it the suites that build a cluster fail loudly,
// naming the file, instead of skipping. As a script: `tsx scripts/coredns-source.ts DIR` sets it
// in DIR/cluster.yaml when the archive exists and dns.source is not set yet.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseDocument } from 'yaml';

/** The CoreDNS v1.8.3 source archive the tests and the demo build from. */
export const COREDNS_SOURCE = resolve(import.meta.dirname, '../../shared/third_party/coredns-1.8.3.tar.gz');

/** Sets dns.source in DIR/cluster.yaml to COREDNS_SOURCE (other keys kept); throws when the archive is missing. */
export function useCorednsSource(dir: string): void {
  if (!existsSync(COREDNS_SOURCE)) {
    throw new Error(`the CoreDNS source archive ${COREDNS_SOURCE} does not exist: the cluster suites build CoreDNS offline from it (see ../shared/third_party/README.md)`);
  }
  const file = join(dir, 'cluster.yaml');
  const doc = parseDocument(existsSync(file) ? readFileSync(file, 'utf8') : '');
  doc.setIn(['dns', 'source'], COREDNS_SOURCE);
  writeFileSync(file, String(doc));
}

// The demo: set it when the archive is there and the project names no source of its own.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dir = process.argv[2]!;
  const file = join(dir, 'cluster.yaml');
  const set = existsSync(file) && parseDocument(readFileSync(file, 'utf8')).hasIn(['dns', 'source']);
  if (!set && existsSync(COREDNS_SOURCE)) {
    useCorednsSource(dir);
    console.log(`cluster.yaml: dns.source set to ${COREDNS_SOURCE} (CoreDNS is built offline from it)`);
  }
}
