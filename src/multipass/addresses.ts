// Which of a VM's addresses goes into machines.txt, and which addresses moved since machines.txt
// was written. Multipass lists the management address first, then others (a bridged NIC, cni0 once
// a worker runs pods); an address already in machines.txt is kept while the VM still has it. Pure.

/** One VM whose address is not the one machines.txt has. */
export interface AddressChange {
  vm: string;
  hostname: string;
  was: string;
  now: string;
}

/** The address to use: `previous` while the VM still has it, else the first (Multipass's management address). */
export function pickAddress(ipv4: string[], previous: string | undefined): string | undefined {
  return previous !== undefined && ipv4.includes(previous) ? previous : ipv4[0];
}

/** The VMs whose address differs from machines.txt's (hostnames machines.txt lacks are not changes). */
export function addressChanges(inFile: Map<string, string>, vms: Array<{ vm: string; hostname: string; ip: string }>): AddressChange[] {
  return vms.flatMap((m) => {
    const was = inFile.get(m.hostname);
    return was !== undefined && was !== m.ip ? [{ vm: m.vm, hostname: m.hostname, was, now: m.ip }] : [];
  });
}

/** One line per change, for people. */
export function describeChanges(changes: AddressChange[]): string[] {
  return changes.map((c) => `${c.hostname} (${c.vm}): ${c.was} in machines.txt, now ${c.now}`);
}
