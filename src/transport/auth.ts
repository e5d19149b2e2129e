// Which credentials to offer a hop: the identity files first (explicit intent), then ssh-agent.
// Keys are read here and held only in memory for the connection; they are never logged.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import ssh2, { type AnyAuthMethod } from 'ssh2';
import { checkIdentityFile } from '../identity-file.ts';
import type { Endpoint } from './endpoint.ts';

// ssh2 is CommonJS: Node's own ESM loader (bin/hardway.mjs) does not see `utils` as a named export
// (vitest does), so it comes from the default export.
const { utils } = ssh2;

/** The methods to try, in order, with words for an error message (paths, never key material). */
export interface AuthOffer {
  methods: AnyAuthMethod[];
  /** What was offered, e.g. `/root/.ssh/id_ed25519`, `ssh-agent`. */
  offered: string[];
  /** Why something was not offered, e.g. an encrypted key without an agent. */
  notes: string[];
}

/** The -i files of a command, checked at once (see checkIdentityFile), relative to `cwd`, ~ the home directory; their absolute paths. */
export function checkIdentityFiles(files: readonly string[] | undefined, cwd: string, home = homedir()): string[] {
  return (files ?? []).map((f) => {
    const expanded = f === '~' || f.startsWith('~/') ? join(home, f.slice(1)) : f;
    const path = isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
    checkIdentityFile(path, '-i');
    return path;
  });
}

/** Builds the auth methods for a hop from its identity files and the agent socket (SSH_AUTH_SOCK). */
export function authOffer(endpoint: Endpoint, agentSocket: string | undefined): AuthOffer {
  const offer: AuthOffer = { methods: [], offered: [], notes: [] };
  for (const file of endpoint.identityFiles) {
    const parsed = utils.parseKey(readFileSync(file));
    if (parsed instanceof Error) {
      offer.notes.push(/encrypt|passphrase/i.test(parsed.message)
        ? `${file} is passphrase-protected: add it to ssh-agent (ssh-add ${file})`
        : `${file} is not a usable private key (${parsed.message})`);
      continue;
    }
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    offer.methods.push({ type: 'publickey', username: endpoint.user, key });
    offer.offered.push(file);
  }
  if (agentSocket) {
    if (existsSync(agentSocket)) {
      offer.methods.push({ type: 'agent', username: endpoint.user, agent: agentSocket });
      offer.offered.push('ssh-agent');
    } else {
      offer.notes.push(`SSH_AUTH_SOCK ${agentSocket} does not exist`);
    }
  }
  return offer;
}
