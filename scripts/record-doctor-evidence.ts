// Records what `hardway doctor` gathers on a real cluster (the API's answer and every machine's
// evidence, with the rendered files and pki/ certificates it judges them against) as a JSON fixture
// for doctor's unit tests: `tsx scripts/record-doctor-evidence.ts PROJECT_DIR OUT.json`.
// Read-only, like doctor itself. The fixtures in test/fixtures/doctor*/ were made this way.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gatherApi } from '../src/doctor/api.ts';
import { defaultTestImages, labOf, pkiCertificates, renderedForDoctor } from '../src/doctor/context.ts';
import { gatherMachine } from '../src/doctor/gather.ts';
import { hostConnector, ONE_ATTEMPT } from '../src/transport/index.ts';
import { pullRequests, requestsFor } from '../src/doctor/batch.ts';
import { loadInventory } from '../src/inventory.ts';
import { defaultLabPaths } from '../src/lab/names.ts';

const [dir, out] = process.argv.slice(2) as [string, string];
const inventory = loadInventory(join(dir, 'machines.txt'));
const rendered = renderedForDoctor(inventory);
const lab = labOf(inventory, defaultLabPaths(process.env));
const api = await gatherApi(inventory, process.env);
const testImages = defaultTestImages(inventory, api, lab);
const connect = hostConnector(inventory, { dir: inventory.dir, ...ONE_ATTEMPT });
const evidence = await Promise.all(inventory.machines.map((m) =>
  gatherMachine(m, [requestsFor(inventory, m, Object.keys(rendered[m.hostname] ?? {})), pullRequests(inventory, m, testImages)], connect)));
writeFileSync(out, JSON.stringify({ now: Date.now(), lab, testImages, pki: pkiCertificates(inventory), rendered, api, evidence }, null, 1) + '\n');
console.log(`${out}: ${inventory.machines.length} machines, ${api.nodes.length} nodes${api.error ? `, API error: ${api.error}` : ''}`);
