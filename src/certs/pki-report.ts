// What each maker of pki/ (certs, kubeconfigs, encryption-config) reports: its lines in order, each
// marked kept or not, so `hardway up` can count what it kept without reading printed text.

/** One line of a report; `kept` marks a file left exactly as it was. */
export interface PkiLine {
  text: string;
  kept: boolean;
}

/** What one maker of pki/ did: its lines in order, and warnings (printed to stderr). */
export interface PkiReport {
  lines: PkiLine[];
  warnings: string[];
}

/** A line for a file kept as it was. */
export const keptLine = (text: string): PkiLine => ({ text, kept: true });

/** A line for anything else done or noted (issued, written, a mode narrowed, a file moved). */
export const doneLine = (text: string): PkiLine => ({ text, kept: false });
