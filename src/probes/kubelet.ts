// Probes of a worker's kubelet and kube-proxy as doctor reads them: the server and client
// certificate of a kubeconfig (never its key), and the resolver file pods are handed.
import { WORKER } from '../layout.ts';
import { sh } from '../shell.ts';
import { probe } from './probe.ts';

/** The `server:` and `client-certificate-data:` values of a kubeconfig: the key line never leaves the machine. */
export const kubeconfigEndpoint = probe('kubeconfig-endpoint', (path: string) => sh`sed -n -e 's/^ *server: *//p' -e 's/^ *client-certificate-data: *//p' ${path}`);

/**
 * The kubelet's resolver file as its config names it (`resolvConf=`), whether systemd-resolved
 * runs (`resolved=`: hardway's rule for that file follows it), and that file's nameserver lines:
 * what pods with dnsPolicy Default, CoreDNS among them, are given.
 */
export const kubeletResolver = probe('kubelet-resolver', () =>
  sh`f=$(sed -n 's/^resolvConf: *//p' ${WORKER.kubeletConfig} 2>/dev/null | tr -d '"'); echo "resolvConf=$f"; echo "resolved=$(systemctl is-active systemd-resolved 2>/dev/null)"; [ -n "$f" ] && grep -h '^nameserver' "$f" 2>/dev/null; :`);
