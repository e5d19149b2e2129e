// Talking to etcd over TLS with the client certificate hardway issued (signed by the etcd CA).
import { SERVER } from '../layout.ts';
import { sh, type Command } from '../shell.ts';

/** etcdctl against the local member over TLS with the client certificate. */
export function etcdctl(args: Command): Command {
  return sh`ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert=${SERVER.etcdCa} --cert=${SERVER.etcdClientCrt} --key=${SERVER.etcdClientKey} --command-timeout=5s ${args}`;
}

/** Waits (up to `timeoutS`) until the local etcd member reports healthy over TLS; prints the last answer on stderr when it gives up. */
export function waitEtcdCommand(timeoutS: number): Command {
  const health = etcdctl(sh`endpoint health`);
  return sh`for i in $(seq ${timeoutS}); do out=$(${health} 2>&1) && echo "$out" && exit 0; sleep 1; done; echo "etcd did not report healthy over TLS within ${timeoutS}s: $out" >&2; exit 1`;
}
