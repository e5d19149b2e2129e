// The smoke test's cluster DNS checks: a short-lived pod on each worker asks CoreDNS for the API
// Service's name and the smoke Service's, and fetches the smoke page by the Service's short name
// (src/steps/smoke-dns.sh, run by sh in the pod). The jumpbox judges what each pod printed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../../inventory.ts';
import { PACKAGE_ROOT } from '../../render/templates.ts';
import { sh, type Command } from '../../shell.ts';

/** The program each client pod runs (comment lines left out). */
const CLIENT = readFileSync(join(PACKAGE_ROOT, 'src/steps/smoke-dns.sh'), 'utf8').replace(/^#.*\n/gm, '');

/** The client pod of one worker. */
export const clientPod = (smokeName: string, worker: string) => `${smokeName}-dns-${worker}`;

/**
 * The kubectl arguments that start the client pod on `worker` (pinned there with nodeName, so the
 * scheduler cannot put both on one node), running `image`'s sh with the client program.
 */
export function clientPodArgs(inv: Inventory, smoke: { name: string; address: string }, worker: string, image: string): Command {
  const domain = inv.settings.clusterDomain;
  const overrides = JSON.stringify({ apiVersion: 'v1', spec: { nodeName: worker } });
  return sh`run ${clientPod(smoke.name, worker)} --image=${image} --restart=Never --labels=${`app=${smoke.name}-dns`} --overrides=${overrides} --command -- sh -c ${CLIENT} sh ${`kubernetes.default.svc.${domain}`} ${inv.serviceIp} ${`${smoke.name}.default.svc.${domain}`} ${smoke.address} ${smoke.name}`;
}

/** What one client pod found, against what it should have found: one line per check that failed. */
export function judgeClient(output: string, want: { api: string; svc: string; worker: string; serviceName: string; domain: string }): string[] {
  const got = new Map(output.split('\n').flatMap((l) => {
    const m = /^(api|svc|http)=(.*)$/.exec(l.trim());
    return m ? [[m[1]!, m[2]!.trim()] as const] : [];
  }));
  const problems: string[] = [];
  const name = (n: string, key: 'api' | 'svc', addr: string) => {
    const g = got.get(key);
    if (g !== addr) problems.push(`${n} resolves to ${g ? g : 'nothing'} in a pod on ${want.worker}, want ${addr}`);
  };
  name(`kubernetes.default.svc.${want.domain}`, 'api', want.api);
  name(`${want.serviceName}.default.svc.${want.domain}`, 'svc', want.svc);
  if (got.get('http') !== 'ok') problems.push(`http://${want.serviceName}/ does not answer from a pod on ${want.worker}`);
  return problems;
}
