// Secret redaction for everything hardway prints or logs: private keys, kubeconfig key data,
// encryption keys, and any content a step marked secret during this run.

const PATTERNS: Array<[RegExp, string]> = [
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, '[REDACTED $1PRIVATE KEY]'],
  [/((?:client-key-data|token|password)\s*:\s*)("?)[^\s"]+\2/g, '$1[REDACTED]'],
  [/(\bsecret\s*:\s*)("?)[^\s"]+\2/g, '$1[REDACTED]'],
];

/** Secrets are found by their first PREFIX characters (every registered secret is at least this long). */
const PREFIX = 8;

/** Removes secrets from text; `add` registers content that must never appear (e.g. a secret put). */
export class Redactor {
  /** Registered secrets by their first PREFIX characters, longest first. */
  private readonly byPrefix = new Map<string, string[]>();

  /** Registers secret content: the whole text and every long token-like line in it. */
  add(content: string | Buffer): void {
    const text = Buffer.isBuffer(content) ? content.toString('utf8') : content;
    if (text.trim().length >= 8) this.remember(text);
    for (const line of text.split('\n')) {
      // Key material and tokens are long runs without spaces; ordinary config lines are not redacted.
      const t = line.trim();
      if (t.length >= 16 && !/\s/.test(t)) this.remember(t);
      // Values of 32+ token characters (base64 key data); shorter ones are names like
      // kube-controller-manager, which would otherwise vanish from every line that mentions them.
      const value = /:\s*"?([A-Za-z0-9+/=_-]{32,})"?\s*$/.exec(t)?.[1];
      if (value && !/^[a-z-]+$/.test(value)) this.remember(value);
    }
  }

  /**
   * The text with every known secret and secret-looking block replaced by a placeholder. Every log
   * line passes here and a run registers thousands of key lines: each position of the text is
   * looked up by its prefix once, instead of searching the text for every secret.
   */
  redact(text: string): string {
    let out = this.byPrefix.size ? this.hideSecrets(text) : text;
    for (const [re, repl] of PATTERNS) out = out.replace(re, repl);
    return out;
  }

  private remember(secret: string): void {
    const key = secret.slice(0, PREFIX);
    const list = this.byPrefix.get(key) ?? [];
    if (list.includes(secret)) return;
    list.push(secret);
    list.sort((a, b) => b.length - a.length);
    this.byPrefix.set(key, list);
  }

  /** Replaces each run of text covered by occurrences of registered secrets with one placeholder. */
  private hideSecrets(text: string): string {
    let covered = -1;
    const runs: Array<[number, number]> = [];
    for (let i = 0; i + PREFIX <= text.length; i++) {
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
