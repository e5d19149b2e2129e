// smoke: the smoke test of a finished cluster (needs the real Kubernetes binaries and an image the
// workers can pull). It writes to the cluster, so it is its own command, not part of verify:
// 1. a secret created through the API is stored in etcd encrypted (prefix k8s:enc:aescbc:v1:KEY, key1 until the first rotation);
// 2. a deployment's pod reaches Running, and `kubectl logs`, `exec` and `port-forward` work (API
//    server -> kubelet:10250 through the kubelet RBAC);
// 3. a NodePort service answers on the node that runs the pod;
// 4. with cluster DNS on: from a pod on each worker, the API Service's and the smoke Service's
//    names resolve to their addresses, and the smoke page answers by the Service's short name.
// Objects are named hardway-smoke and replaced on every run.
import { FailureError, PreconditionError } from '../errors.ts';
import { sh, type Command } from '../shell.ts';
import type { ActionContext, ActionStep } from '../engine/types.ts';
import { localKubectl } from '../probes/api.ts';
import { DNS_DEPLOYMENT, DNS_NAMESPACE, DNS_POD_LABEL } from '../dns/manifest.ts';
import { etcdctl } from '../probes/etcd.ts';
import { clientPod, clientPodArgs, judgeClient } from './support/smoke-dns.ts';
import { numberOption, textOption } from './options.ts';
import { podEventReasons } from './support/pod-events.ts';

/** The name of every object the smoke test creates. */
export const SMOKE_NAME = 'hardway-smoke';

const bash = (cmd: Command) => sh`bash -c ${cmd.text}`;
const kubectl = (args: Command) => localKubectl(args, 30);

/** custom-columns that list each pod with its own node, phase and deletion mark. */
export const POD_COLUMNS = 'custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,PHASE:.status.phase,DELETING:.metadata.deletionTimestamp';

/** The first pod of a POD_COLUMNS listing that is Running on a node and not being deleted. */
export function runningPod(listing: string): { pod: string; node: string } | undefined {
  for (const line of listing.split('\n')) {
    const [pod, node, phase, deleting] = line.trim().split(/\s+/);
    if (pod && node && node !== '<none>' && phase === 'Running' && deleting === '<none>') return { pod, node };
  }
  return undefined;
}

/** A bash loop: up to `tries` HTTP requests to ip:port, 3 s each, a second apart; exit 0 on the first answer. */
function httpRetry(ip: string, port: string, tries: number): Command {
  const once = sh`exec 3<>/dev/tcp/${ip}/${port} && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && head -1 <&3 | grep -q HTTP`;
  return sh`for i in $(seq ${String(tries)}); do timeout 3 bash -c ${once.text} && exit 0; sleep 1; done; exit 1`;
}

/** The smoke step (first control-plane machine). */
export const smokeStep: ActionStep = {
  kind: 'action',
  name: 'smoke',
  title: 'Smoke-test the cluster: encrypted secrets, a running pod, logs, exec, port-forward, NodePort, names in pods',
  targets: (inv) => inv.controlPlanes.slice(0, 1),
  async run(ctx: ActionContext) {
    const image = textOption(ctx.options, 'web-image');
    const run = async (what: string, cmd: Command) => {
      const r = await ctx.transport.exec(cmd, { timeoutMs: 240_000 });
      if (r.code !== 0) throw new FailureError(`smoke test: ${what} failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' / ')}`);
      return r.stdout;
    };
    const api = await ctx.transport.exec(kubectl(sh`get --raw=/readyz`));
    if (api.code !== 0) throw new PreconditionError(`smoke test: the API does not answer: ${api.stderr.trim().split('\n').pop()}`, 'run "hardway up" first');

    await run('creating a secret', sh`${kubectl(sh`delete secret ${SMOKE_NAME} --ignore-not-found`)} && ${kubectl(sh`create secret generic ${SMOKE_NAME} --from-literal=mykey=mydata`)}`);
    const stored = await run('reading the secret from etcd', sh`${etcdctl(sh`get /registry/secrets/default/${SMOKE_NAME}`)} | od -An -c | tr -d ' \\n'`);
    // Under whichever key the API server writes with: key1 at first, the next one after each rotation.
    const key = storedKey(stored);
    if (!key) throw new FailureError('smoke test: the secret is stored in etcd without aescbc encryption');
    ctx.log.info(`secret stored encrypted in etcd (k8s:enc:aescbc:v1:${key})`);

    await run('starting a deployment', sh`${kubectl(sh`delete deployment,service ${SMOKE_NAME} --ignore-not-found`)} && ${kubectl(sh`create deployment ${SMOKE_NAME} --image=${image}`)}`);
    const rolloutS = numberOption(ctx.options, 'rollout-timeout');
    const rollout = await ctx.transport.exec(kubectl(sh`rollout status deployment/${SMOKE_NAME} --timeout=${`${rolloutS}s`}`), { timeoutMs: (rolloutS + 60) * 1000 });
    if (rollout.code !== 0) {
      // kubectl says only "timed out waiting for the condition": the pods' events say why.
      const said = (rollout.stderr || rollout.stdout).trim().split('\n').pop();
      const reasons = await podReasons(ctx);
      throw new FailureError(`smoke test: deployment ${SMOKE_NAME} did not roll out (${said}):\n  - ${reasons.join('\n  - ')}`,
        'run "hardway doctor": it names what keeps pods from starting and the command that fixes it');
    }
    // Pods of an earlier run's deployment may still be Terminating beside the new one: the pod is
    // picked by its own fields (not the list's), Running and not being deleted.
    const listing = await run('finding the pod', kubectl(sh`get pods -l app=${SMOKE_NAME} --no-headers -o ${POD_COLUMNS}`));
    const picked = runningPod(listing);
    if (!picked) throw new FailureError(`smoke test: no Running pod of deployment ${SMOKE_NAME}:\n${listing.trim()}`);
    const { pod: podName, node } = picked;
    ctx.log.info(`pod ${podName} Running on ${node}`);
    await run('kubectl logs', kubectl(sh`logs ${podName}`));
    await run('kubectl exec', kubectl(sh`exec ${podName} -- true`));
    // /dev/tcp is bash's: the smoke test needs no curl on the server. The check runs in a subshell so
    // a refused connection still reaches the kill of port-forward.
    await run('kubectl port-forward', bash(sh`(${kubectl(sh`port-forward ${podName} 18080:80`)} >/dev/null 2>&1 & echo $! > /tmp/${SMOKE_NAME}.pid); ok=1; (${httpRetry('127.0.0.1', '18080', 10)}) && ok=0; kill $(cat /tmp/${SMOKE_NAME}.pid); exit $ok`));
    ctx.log.info('logs, exec and port-forward work');

    await run('exposing a NodePort', kubectl(sh`expose deployment ${SMOKE_NAME} --port=80 --type=NodePort`));
    const port = (await run('reading the node port', kubectl(sh`get service ${SMOKE_NAME} -o jsonpath={.spec.ports[0].nodePort}`))).trim();
    const ip = ctx.inventory.machines.find((m) => m.hostname === node)?.ip;
    if (!ip) throw new FailureError(`smoke test: pod ${podName} runs on "${node}", which is not a machine of machines.txt`);
    // kube-proxy holds the node port open as soon as it sees the Service, before its rules exist: a
    // connection in that window is accepted and never answered, so each try has a short timeout.
    await run(`NodePort ${ip}:${port}`, bash(httpRetry(ip, port, 60)));
    ctx.log.info(`NodePort ${port} answers on ${node}`);

    if (!ctx.inventory.settings.dns.enabled) {
      ctx.log.info('cluster DNS is off (dns.enabled: false in cluster.yaml): no name checks');
      return;
    }
    const serviceIp = (await run('reading the Service address', kubectl(sh`get service ${SMOKE_NAME} -o jsonpath={.spec.clusterIP}`))).trim();
    // A worker that has just restarted restarts its CoreDNS pod too: names are asked once every
    // CoreDNS pod is available again (a bounded wait; a CoreDNS that never comes back fails here).
    await run('waiting for every CoreDNS pod to be available', kubectl(sh`-n ${DNS_NAMESPACE} rollout status ${`deployment/${DNS_DEPLOYMENT}`} --timeout=120s`));
    await run('removing the last run\'s DNS client pods', kubectl(sh`delete pods -l ${`app=${SMOKE_NAME}-dns`} --ignore-not-found --wait=true`));
    const workers = ctx.inventory.workers.map((w) => w.hostname);
    for (const w of workers) await run(`starting a DNS client pod on ${w}`, kubectl(clientPodArgs(ctx.inventory, { name: SMOKE_NAME, address: serviceIp }, w, image)));
    const problems: string[] = [];
    for (const w of workers) {
      const output = await run(`the DNS client pod on ${w}`, bash(podOutput(clientPod(SMOKE_NAME, w), 120)));
      problems.push(...judgeClient(output, { api: ctx.inventory.serviceIp, svc: serviceIp, worker: w, serviceName: SMOKE_NAME, domain: ctx.inventory.settings.clusterDomain }));
    }
    if (problems.length > 0) {
      // Where CoreDNS runs and which of its pods the Service sends queries to, for the person reading.
      const where = await ctx.transport.exec(kubectl(sh`-n ${DNS_NAMESPACE} get pods,endpoints -l ${DNS_POD_LABEL} -o wide`));
      throw new FailureError(`smoke test: cluster DNS does not answer as it should:\n  - ${problems.join('\n  - ')}\n${where.stdout.trim()}`, 'run "hardway doctor": it checks CoreDNS, its pods and each kubelet\'s DNS settings');
    }
    ctx.log.info(`names resolve in pods on ${workers.join(' and ')} (kubernetes.default -> ${ctx.inventory.serviceIp}, ${SMOKE_NAME} -> ${serviceIp}), and http://${SMOKE_NAME}/ answers there`);
  },
};

/** The aescbc key a value read from etcd (as `od -c` shows it, blanks removed) is stored under, or undefined when it is not aescbc-encrypted. */
export function storedKey(stored: string): string | undefined {
  return /k8s:enc:aescbc:v1:([^:\\]+):/.exec(stored)?.[1];
}

/** A bash loop: waits up to `timeoutS` for pod `name` to finish, then prints its log (exit 1 with its state when it did not). */
function podOutput(name: string, timeoutS: number): Command {
  const phase = kubectl(sh`get pod ${name} -o jsonpath={.status.phase}`);
  const state = kubectl(sh`get pod ${name} -o jsonpath={.status.containerStatuses[0].state}`);
  return sh`for i in $(seq ${String(timeoutS)}); do p=$(${phase}); case "$p" in Succeeded|Failed) exec ${kubectl(sh`logs ${name}`)};; esac; sleep 1; done; echo "pod ${name} did not finish in ${String(timeoutS)} s: phase $p, $(${state})" >&2; exit 1`;
}

/** Each pod of the smoke deployment with its last event's reason (what kept it from starting). */
async function podReasons(ctx: ActionContext): Promise<string[]> {
  const pods = await ctx.transport.exec(kubectl(sh`get pods -l ${`app=${SMOKE_NAME}`} -o ${'jsonpath={.items[*].metadata.name}'}`));
  const events = await ctx.transport.exec(kubectl(sh`get events --field-selector involvedObject.kind=Pod -o json`));
  if (pods.code !== 0 || events.code !== 0) return [`its pods' events could not be read: ${(pods.code !== 0 ? pods : events).stderr.trim().split('\n').pop()}`];
  return podEventReasons(pods.stdout.trim().split(/\s+/).filter(Boolean), events.stdout);
}
