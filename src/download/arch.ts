// The machines' architecture: given with --arch, or the jumpbox's own (dpkg's name, or uname -m mapped).
import { InputError } from '../errors.ts';
import { tryLocal } from '../transport/local.ts';
import { ARCHES, type Arch } from './versions.ts';

const UNAME_TO_DEBIAN: Record<string, string> = { x86_64: 'amd64', aarch64: 'arm64', arm64: 'arm64' };

/** Validates an --arch value. */
export function parseArch(value: string): Arch {
  if ((ARCHES as readonly string[]).includes(value)) return value as Arch;
  throw new InputError(`--arch ${value} is not supported`, `use one of: ${ARCHES.join(', ')}`);
}

/** The jumpbox's architecture in Debian's naming: `dpkg --print-architecture`, else `uname -m` mapped. */
export async function hostArch(): Promise<Arch> {
  const dpkg = await tryLocal`dpkg --print-architecture`;
  let name = dpkg.code === 0 ? dpkg.stdout.trim() : '';
  if (!name) {
    const uname = await tryLocal`uname -m`;
    name = UNAME_TO_DEBIAN[uname.stdout.trim()] ?? uname.stdout.trim();
  }
  if ((ARCHES as readonly string[]).includes(name)) return name as Arch;
  throw new InputError(`this machine's architecture "${name}" has no Kubernetes release files in hardway`, `pass --arch ${ARCHES.join(' or --arch ')} for the cluster machines`);
}
