// Secret redaction for everything hardway prints or logs: private keys, kubeconfig key data,
// encryption keys, and any content a step marked secret during this run.

const PATTERNS: Array<[RegExp, string]> = [
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, '[REDACTED $1PRIVATE KEY]'],
  [/((?:client-key-data|token|password)\s*:\s*)("?)[^\s"]+\2/g, '$1[REDACTED]'],
  [/(\bsecret\s*:\s*)("?)[^\s"]+\2/g, '$1[REDACTED]'],
];

/** Removes secrets from text; `add` registers content that must never appear (e.g. a secret put). */
export class Redactor {
  private readonly secrets = new Set<string>();

  /** Registers secret content: the whole text and every long token-like line in it. */
  add(content: string | Buffer): void {
    const text = Buffer.isBuffer(content) ? content.toString('utf8') : content;
    if (text.trim().length >= 8) this.secrets.add(text);
    for (const line of text.split('\n')) {
      // Key material and tokens are long runs without spaces; ordinary config lines are not redacted.
      const t = line.trim();
      if (t.length >= 16 && !/\s/.test(t)) this.secrets.add(t);
      // Values of 32+ token characters (base64 key data); shorter ones are names like
      // kube-controller-manager, which would otherwise vanish from every line that mentions them.
      const value = /:\s*"?([A-Za-z0-9+/=_-]{32,})"?\s*$/.exec(t)?.[1];
      if (value && !/^[a-z-]+$/.test(value)) this.secrets.add(value);
    }
  }

  /** The text with every known secret and secret-looking block replaced by a placeholder. */
  redact(text: string): string {
    let out = text;
    for (const s of [...this.secrets].sort((a, b) => b.length - a.length)) {
      if (out.includes(s)) out = out.split(s).join('[REDACTED]');
    }
    for (const [re, repl] of PATTERNS) out = out.replace(re, repl);
    return out;
  }
}
