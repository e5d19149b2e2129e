// The cluster's API server and etcd members, asked straight from the jumpbox over HTTPS (one
// ClusterApi per run). Where the jumpbox cannot reach one (it sits outside the machines' network),
// that endpoint is given up for the rest of the run and hardway asks as before, with kubectl or
// etcdctl on the control-plane machine over SSH; -v says so. Behind a bastion (ssh.jumpHost) the
// machines are out of the jumpbox's reach by design: no direct endpoint at all.
import type { Inventory } from '../inventory.ts';
import { apiClientTls, etcdClientTls, hasApiCredentials, hasEtcdCredentials } from './credentials.ts';
import { HttpsEndpoint, NoAnswer, type Limits, type TlsClient } from './https-endpoint.ts';

/** What hardway does instead of a direct request, for the messages. */
const OLD_ROUTE = 'asking through kubectl/etcdctl on the control-plane machine over SSH';

/** etcd's client port on every control plane. */
export const ETCD_CLIENT_PORT = 2379;

/** What a ClusterApi needs besides the inventory; tests pass their own TLS material and timeouts. */
export interface ClusterApiOptions {
  /** Called once for each endpoint given up (shown with -v, always in the run log). */
  say?: (line: string) => void;
  /** Called once for each endpoint whose certificate failed verification (a warning: something answers there that pki/ does not trust). */
  warn?: (line: string) => void;
  /** TLS material instead of pki/'s (tests). */
  apiTls?: TlsClient;
  etcdTls?: TlsClient;
  /** The API server's address instead of the first control plane's (tests: a fake on loopback). */
  apiAddress?: { host: string; port: number };
  /** Where the member of a control plane's address is asked instead of IP:2379 (tests: a fake on loopback). */
  etcdAddress?: (ip: string) => { host: string; port: number };
  timeouts?: Partial<Limits>;
}

/** The direct endpoints of one run: the first control plane's API server and each control plane's etcd member. */
export class ClusterApi {
  private api?: HttpsEndpoint;
  private readonly etcd = new Map<string, HttpsEndpoint>();
  private readonly givenUp = new Set<string>();
  private readonly confirming = new Map<string, Promise<boolean>>();
  private readonly warned = new Set<string>();

  constructor(readonly inv: Inventory, private readonly opts: ClusterApiOptions = {}) {}

  /** A ClusterApi for this run, or none: with ssh.jumpHost, or when pki/ lacks the admin certificate. */
  static forRun(inv: Inventory, opts: ClusterApiOptions = {}): ClusterApi | undefined {
    if (inv.settings.ssh.jumpHost !== undefined) return undefined;
    if (!opts.apiTls && !hasApiCredentials(inv)) return undefined;
    return new ClusterApi(inv, opts);
  }

  /** The first control plane's API server (https://<its ip>:<apiPort>), unless given up in this run. */
  apiServer(): HttpsEndpoint | undefined {
    if (!this.api) {
      const cp = this.inv.controlPlanes[0]!;
      const at = this.opts.apiAddress ?? { host: cp.ip, port: this.inv.settings.apiPort };
      this.api = new HttpsEndpoint(at.host, at.port, this.opts.apiTls ?? apiClientTls(this.inv), this.opts.timeouts);
    }
    return this.givenUp.has(this.api.url) ? undefined : this.api;
  }

  /** The etcd member at `ip` (https://ip:2379, its /health), unless given up or pki/ lacks the etcd client certificate. */
  etcdMember(ip: string): HttpsEndpoint | undefined {
    let e = this.etcd.get(ip);
    if (!e) {
      if (!this.opts.etcdTls && !hasEtcdCredentials(this.inv)) return undefined;
      const at = this.opts.etcdAddress?.(ip) ?? { host: ip, port: ETCD_CLIENT_PORT };
      e = new HttpsEndpoint(at.host, at.port, this.opts.etcdTls ?? etcdClientTls(this.inv), this.opts.timeouts);
      this.etcd.set(ip, e);
    }
    return this.givenUp.has(e.url) ? undefined : e;
  }

  /**
   * Called when `endpoint` gave no answer but the machine's own route (kubectl, etcdctl over SSH)
   * did: asks it once more, and if it still does not answer the jumpbox cannot reach it (a server
   * that was only starting answers now), so it is given up for the rest of the run. True if given up.
   */
  confirmUnreachable(endpoint: HttpsEndpoint, healthPath: string): Promise<boolean> {
    let p = this.confirming.get(endpoint.url);
    if (!p) {
      p = endpoint.get(healthPath).then(() => false, (e: unknown) => {
        if (!(e instanceof NoAnswer)) throw e;
        this.givenUp.add(endpoint.url);
        endpoint.close();
        if (e.certificate) this.noAnswer(endpoint, e);
        else {
          this.opts.say?.(`${endpoint.url} does not answer this machine (${e.why}), though the control plane's own route does: ` +
            `${OLD_ROUTE} for the rest of this run`);
        }
        return true;
      });
      // A server that was starting may stop answering later: ask again then.
      void p.then((gave) => gave || this.confirming.delete(endpoint.url), () => this.confirming.delete(endpoint.url));
      this.confirming.set(endpoint.url, p);
    }
    return p;
  }

  /**
   * Told of every NoAnswer of a direct request: one whose certificate failed verification is no
   * network trouble but something pki/ does not trust at that address (another CA, a wrong
   * name, an interception): warned once per endpoint, not only said with -v.
   */
  noAnswer(endpoint: HttpsEndpoint, e: NoAnswer): void {
    if (!e.certificate || this.warned.has(endpoint.url)) return;
    this.warned.add(endpoint.url);
    this.opts.warn?.(`${endpoint.url}: its certificate failed verification (${e.why}): ${OLD_ROUTE}; ` +
      'check that pki/ holds the CA that signed that server\'s certificate (hardway certs check) and that nothing intercepts the connection');
  }

  /** Whether `endpoint` was given up in this run. */
  isGivenUp(endpoint: HttpsEndpoint): boolean {
    return this.givenUp.has(endpoint.url);
  }

  /** Closes every endpoint's connections (the end of a run). */
  close(): void {
    this.api?.close();
    for (const e of this.etcd.values()) e.close();
  }
}
