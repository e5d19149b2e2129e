// PEM text without node-forge: splitting a bundle into its certificates and encoding DER as PEM
// are all a no-op run needs, so it never loads forge (~40 ms of CPU to load) to read pki/.

/** The PEM certificate blocks of a text (a bundle may hold several), each ending in a newline; the text itself when it has none. */
export function pemBlocks(text: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  return blocks.length > 0 ? blocks.map((b) => (b.endsWith('\n') ? b : `${b}\n`)) : [text];
}

/** PEM text of a DER certificate, 64 characters a line. */
export function toPem(certDer: Buffer): string {
  const lines = certDer.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
