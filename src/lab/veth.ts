// The host side of a machine's veth pair. When nspawn exits, the kernel removes the pair later,
// with the machine's network namespace (asynchronous, slower on a loaded host); an nspawn started
// for the same machine before then fails with "Failed to add new veth interfaces ... File exists".
import { readdirSync, readFileSync } from 'node:fs';
import { machineInit } from './boot-journal.ts';
import { tryLocal } from '../transport/local.ts';

/** The host-side name of a running machine's veth (the peer of its host0), if it can be read. */
export async function hostVeth(nspawnPid: number): Promise<string | undefined> {
  const init = machineInit(nspawnPid);
  if (init === undefined) return undefined;
  // nspawn shortens long names with a hash, so the name is read, not derived: host0's peer index.
  const r = await tryLocal`nsenter -t ${String(init)} -n ip -o link show dev host0`;
  const index = /host0@if(\d+)/.exec(r.stdout)?.[1];
  return index === undefined ? undefined : interfaceByIndex(Number(index));
}

/** Waits until the interface is gone; deletes it if it outlives the wait (its machine has exited). */
export async function waitForVethGone(name: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!interfaceExists(name)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  await tryLocal`ip link del dev ${name}`;
}

function interfaceExists(name: string): boolean {
  try {
    readFileSync(`/sys/class/net/${name}/ifindex`);
    return true;
  } catch {
    return false;
  }
}

function interfaceByIndex(index: number): string | undefined {
  for (const name of readdirSync('/sys/class/net')) {
    try {
      if (Number(readFileSync(`/sys/class/net/${name}/ifindex`, 'utf8').trim()) === index) return name;
    } catch {
      // gone while listing
    }
  }
  return undefined;
}
