// The registry of every read-only probe hardway asks a machine, by name. Plans, checks, doctor and
// reset ask only these (src/probes/probe.ts makes requests of them alone); the test machines
// accept exactly these names, so what the tests allow and what production asks cannot drift apart.
// Reads of a cluster's API (kubectl.ts) and of etcd (etcdctl.ts) are probes too, their waits included.
import * as containerd from './containerd.ts';
import * as etcdctl from './etcdctl.ts';
import * as fn from './function.ts';
import * as kubectl from './kubectl.ts';
import * as kubelet from './kubelet.ts';
import * as names from './names.ts';
import * as network from './network.ts';
import type { Probe } from './probe.ts';
import * as system from './system.ts';
import * as systemd from './systemd.ts';

const isProbe = (v: unknown): v is Probe<unknown[], unknown> => typeof v === 'object' && v !== null && 'ask' in v && 'name' in v;

/** Every probe, by its registry name. */
export const PROBES: ReadonlyMap<string, Probe<never[], unknown>> = new Map(
  [containerd, etcdctl, fn, kubectl, kubelet, names, network, system, systemd]
    .flatMap((m) => Object.values(m).filter(isProbe))
    .map((p) => [p.name, p as Probe<never[], unknown>]),
);
