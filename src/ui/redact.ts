// Secret redaction for everything hardway prints or logs: private keys, kubeconfig key data,
// encryption keys, and any content a step marked secret during this run.

const PATTERNS: Array<[RegExp, string]> = [
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, '[REDACTED $1PRIVATE KEY]'],
  [/((?:client-key-data|token|password)\s*:\s*)("?)[^\s"]+\2/g, '$1[REDACTED]'],
  [/(\bsecret\s*:\s*)("?)[^\s"]+\2/g, '$1[REDACTED]'],
];

/** Secrets are found by their first PREFIX characters (every registered secret is at least this long). */
const PREFIX = 8;

const FILTER_SIZE = 1 << 16;
const FILTER_MASK = FILTER_SIZE - 1;
const BASE = 0x01000193;
/** BASE to the power PREFIX - 1 (32-bit): the weight of the character leaving the window. */
const TOP = Array.from({ length: PREFIX - 1 }).reduce<number>((p) => Math.imul(p, BASE), 1);

/** A 32-bit polynomial hash of the PREFIX characters of `text` from `at`, the one hideSecrets rolls. */
function prefixHash(text: string, at: number): number {
  let h = 0;
  for (let k = at; k < at + PREFIX; k++) h = (Math.imul(h, BASE) + text.charCodeAt(k)) | 0;
  return h;
}

/** Removes secrets from text; `add` registers content that must never appear (e.g. a secret put). */
export class Redactor {
  /** Registered secrets by their first PREFIX characters, longest first. */
  private readonly byPrefix = new Map<string, string[]>();
  /** A bit per prefixHash of the keys of byPrefix (its low 16 bits): most positions of a text are ruled out without a slice. */
  private readonly prefixHashes = new Uint8Array(FILTER_SIZE);

  /** Registers secret content: the whole text and every long token-like line in it. */
  add(content: string | Buffer): void {
    const text = Buffer.isBuffer(content) ? content.toString('utf8') : content;
    if (text.trim().length >= 8) this.remember(text);
    for (const line of text.split('\n')) this.addLine(line);
  }

  /**
   * Registers what one line of secret content holds (a token-like line, a long value), as `add`
   * does for each of its lines; for a file read line by line, never whole. Returns how many
   * characters it registered, so a caller can bound what one file may register.
   */
  addLine(line: string): number {
    let registered = 0;
    // Key material and tokens are long runs without spaces; ordinary config lines are not redacted.
    const t = line.trim();
    if (t.length >= 16 && !/\s/.test(t)) registered += this.remember(t);
    // Values of 32+ token characters (base64 key data); shorter ones are names like
    // kube-controller-manager, which would otherwise vanish from every line that mentions them.
    const value = /:\s*"?([A-Za-z0-9+/=_-]{32,})"?\s*$/.exec(t)?.[1];
    if (value && !/^[a-z-]+$/.test(value)) registered += this.remember(value);
    return registered;
  }

  /**
   * The text with every known secret and secret-looking block replaced by a placeholder. Every log
   * line passes here and a run registers thousands of key lines: each position of the text is
   * looked up by its prefix once, instead of searching the text for every secret, and only where a
   * rolling hash of the prefix matches one (a no-op `up` at 1+32 logs 1 MB: a slice and a map
   * lookup at every position took 50-90 ms of its CPU).
   */
  redact(text: string): string {
    let out = this.byPrefix.size ? this.hideSecrets(text) : text;
    for (const [re, repl] of PATTERNS) out = out.replace(re, repl);
    return out;
  }

  /** Registers one secret; returns its length, or 0 when it was known already. */
  private remember(secret: string): number {
    const key = secret.slice(0, PREFIX);
    const list = this.byPrefix.get(key) ?? [];
    if (list.includes(secret)) return 0;
    list.push(secret);
    list.sort((a, b) => b.length - a.length);
    this.byPrefix.set(key, list);
    this.prefixHashes[prefixHash(key, 0) & FILTER_MASK] = 1;
    return secret.length;
  }

  /** Replaces each run of text covered by occurrences of registered secrets with one placeholder. */
  private hideSecrets(text: string): string {
    let covered = -1;
    const runs: Array<[number, number]> = [];
    let h = text.length >= PREFIX ? prefixHash(text, 0) : 0;
    for (let i = 0; i + PREFIX <= text.length; i++) {
      if (i > 0) h = (Math.imul(h - Math.imul(text.charCodeAt(i - 1), TOP), BASE) + text.charCodeAt(i + PREFIX - 1)) | 0;
      if (this.prefixHashes[h & FILTER_MASK] === 0) continue;
      const found = this.byPrefix.get(text.slice(i, i + PREFIX))?.find((s) => text.startsWith(s, i));
      if (!found) continue;
      const end = i + found.length;
      // Overlapping or touching occurrences become one run, so no part of either shows.
      if (runs.length && i <= covered) runs[runs.length - 1]![1] = Math.max(covered, end);
      else runs.push([i, end]);
      covered = Math.max(covered, end);
    }
    if (runs.length === 0) return text;
    let out = '';
    let from = 0;
    for (const [a, b] of runs) {
      out += text.slice(from, a) + '[REDACTED]';
      from = b;
    }
    return out + text.slice(from);
  }
}
