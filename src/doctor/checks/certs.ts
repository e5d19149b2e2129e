// Certificates as the machines hold them, judged by the machine's own clock: expired, not yet
// valid, not signed by the project's CA, missing the name a peer dials, or not what pki/ holds.
// Pure: PEM texts in, findings out (node:crypto parses; nothing is read here).
import type { Machine } from '../../inventory.ts';
import { identitiesFor } from '../../certs/identities.ts';
import { daysUntil, readableCertificate } from '../../certs/inspect.ts';
import { PKI } from '../../layout.ts';
import { kubeconfigEndpoint } from '../../probes/kubelet.ts';
import { clock } from '../../probes/system.ts';
import { commandFix, projectFix, stepsFix, type Fix } from '../fixes.ts';
import { certificateFiles, KUBECONFIGS } from '../probes.ts';
import type { DoctorContext, MachineEvidence } from '../types.ts';
import { doctorCheck, sameMachine, stdoutOf, type AskOf, type Found, type MachineAnswers } from './check.ts';

/** What the certificates check asks: the machine's clock, and on a worker the server and client certificate of each kubeconfig (never its key). */
const asks = ({ machine }: AskOf) => ({
  clock: clock.ask(),
  ...(machine.role === 'worker' ? { 'kubeconfig kubelet': kubeconfigEndpoint.ask(KUBECONFIGS.kubelet), 'kubeconfig kube-proxy': kubeconfigEndpoint.ask(KUBECONFIGS['kube-proxy']) } : {}),
});

/** The certificates' answers. */
type CertAnswers = MachineAnswers<{ clock: ReturnType<typeof clock.ask>; 'kubeconfig kubelet': ReturnType<typeof kubeconfigEndpoint.ask>; 'kubeconfig kube-proxy': ReturnType<typeof kubeconfigEndpoint.ask> }>;

/** Every installed certificate judged on the machine's own clock. */
export const certificates = doctorCheck({
  name: 'certificates',
  rank: 80,
  looks: "every installed certificate, by the machine's own clock: expired or due for renewal, not yet valid, not signed by pki/ca.crt, missing the name its peer dials",
  asks,
  reads: ({ machine }) => certificateFiles(machine).map((c) => c.path),
  judge: ({ ctx, machine, answers, files }) => certificateFindings(ctx, machine, answers, files),
  explains: { node: sameMachine },
});

/** One certificate to judge: where it is on the machine, its pki/ origin, and what it must name. */
interface Subject {
  where: string;
  what: string;
  pem: string | null;
  pki: string;
  /** A DNS name the certificate must carry (the name its peer dials). */
  mustName?: string;
  /** True for the CA file itself: compared with pki/ca.crt, not verified against it. */
  isCa?: boolean;
}

/** Every certificate problem on a machine, worst first per certificate (one finding each). */
function certificateFindings(ctx: DoctorContext, m: Machine, a: CertAnswers, files: MachineEvidence['files']): Found[] {
  const seconds = Number(a.clock?.stdout.trim());
  const now = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : ctx.now;
  const windowDays = ctx.inventory.settings.renewBeforeDays;
  return subjectsOf(m, ctx.inventory.apiServerName, a, files).flatMap((s) => {
    const problem = judge(ctx, s, now) ?? renewalDue(s, now, windowDays);
    if (!problem) return [];
    const inPki = ctx.pki[s.pki];
    const pkiIsGood = inPki !== undefined && !judge(ctx, { ...s, pem: inPki }, now) && !renewalDue({ ...s, pem: inPki }, now, windowDays);
    // pki/ holds a good one: send it. An expiring (or expired) one in pki/ too: renew it, then send
    // it. Anything else wrong in pki/ is what `up` puts right (certs, kubeconfigs, distribute).
    const fix = inPki !== s.pem && pkiIsGood ? stepsFix(['distribute'], m.hostname)
      : problem.dueToTime ? renewalFix(ctx, s)
        : commandFix('up', m.hostname);
    return [{ machine: m.hostname, cause: `${s.what} on ${m.hostname} ${problem.cause}`, evidence: `${s.where}: ${problem.evidence}`, fix }];
  });
}

/** A readable certificate that expires within the renewal window (renewBeforeDays), if so. */
function renewalDue(s: Subject, now: number, windowDays: number): Problem | undefined {
  if (s.pem === null) return undefined;
  const cert = readableCertificate(s.pem);
  if (!cert) return undefined;
  const to = Date.parse(cert.validTo);
  const days = daysUntil(new Date(to), new Date(now));
  if (now > to || days >= windowDays) return undefined;
  return { cause: `expires in ${days} days (renewBeforeDays: ${windowDays})`, evidence: `notAfter=${new Date(to).toISOString()}, machine clock ${new Date(now).toISOString()}`, dueToTime: true };
}

/** The fix for a certificate whose time is (nearly) up in pki/ as well: renew that identity, then send it. */
function renewalFix(ctx: DoctorContext, s: Subject): Fix {
  if (s.isCa) return [{ caRotation: true }];
  const id = identitiesFor(ctx.inventory).find((i) => i.files.crt === s.pki);
  return [...projectFix('certs', '--renew', id?.name ?? s.pki), ...stepsFix(['distribute'])];
}

function subjectsOf(m: Machine, apiServerName: string, a: CertAnswers, read: MachineEvidence['files']): Subject[] {
  const files: Subject[] = certificateFiles(m).map((c) => ({
    where: c.path, what: c.what, pem: read[c.path] ?? null, pki: c.pki,
    ...(c.pki === PKI.ca.crt ? { isCa: true } : {}),
    // The API server reaches a kubelet by its node name; kubelets reach the API server by apiServerName.
    ...(c.pki.endsWith('/kubelet.crt') ? { mustName: m.hostname } : {}),
    ...(c.pki === PKI.crt('kube-api-server') ? { mustName: apiServerName } : {}),
  }));
  if (m.role !== 'worker') return files;
  const clients: Subject[] = Object.entries(KUBECONFIGS).map(([name, path]) => {
    const [server, data] = stdoutOf(name === 'kubelet' ? a['kubeconfig kubelet'] : a['kubeconfig kube-proxy']).split('\n');
    const pem = data ? Buffer.from(data.trim(), 'base64').toString('utf8') : null;
    const pki = name === 'kubelet' ? PKI.machine(m.hostname, 'kubelet').crt : PKI.crt('kube-proxy');
    return { where: `${path} (client-certificate-data, server ${server?.trim() || '?'})`, what: `the ${name}'s client certificate`, pem, pki };
  });
  // The client certificate decides whether the node can talk to the API at all: judged first.
  return [...clients, ...files];
}

/** What is wrong with a certificate; `dueToTime` when only its validity period is (expired or expiring). */
interface Problem {
  cause: string;
  evidence: string;
  dueToTime?: boolean;
}

/** What is wrong with one certificate at `now`, if anything. */
function judge(ctx: DoctorContext, s: Subject, now: number): Problem | undefined {
  if (s.pem === null) return { cause: 'is missing', evidence: 'No such file or directory' };
  // Node parses lazily: a malformed public key would throw later, so it is read (and judged) here.
  const cert = readableCertificate(s.pem);
  if (!cert) return { cause: 'is not a readable PEM certificate', evidence: 'does not parse as X.509 (or its public key does not)' };
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  const clock = `machine clock ${new Date(now).toISOString()}`;
  if (now > to) return { cause: `expired on ${new Date(to).toISOString()}`, evidence: `notAfter=${cert.validTo}, ${clock}`, dueToTime: true };
  if (now < from) return { cause: `is not valid until ${new Date(from).toISOString()} (is the machine's clock behind?)`, evidence: `notBefore=${cert.validFrom}, ${clock}` };
  const ca = ctx.caPem === undefined ? undefined : readableCertificate(ctx.caPem);
  if (ca) {
    if (s.isCa && cert.fingerprint256 !== ca.fingerprint256) {
      return { cause: 'is not the cluster CA of pki/ca.crt', evidence: `SHA256 fingerprint ${cert.fingerprint256}, pki/ca.crt has ${ca.fingerprint256}` };
    }
    if (!s.isCa && !(cert.checkIssued(ca) && cert.verify(ca.publicKey))) {
      return { cause: 'is not signed by the cluster CA (pki/ca.crt)', evidence: `issuer "${cert.issuer.replace(/\n/g, ', ')}", not verified by pki/ca.crt` };
    }
  }
  if (s.mustName && !sanNames(cert).includes(s.mustName)) {
    return { cause: `does not name ${s.mustName}, the name its peers dial`, evidence: `subjectAltName=${cert.subjectAltName ?? '(none)'}` };
  }
  return undefined;
}

/** The DNS names of a certificate's subjectAltName. */
function sanNames(cert: { subjectAltName: string | undefined }): string[] {
  return (cert.subjectAltName ?? '').split(/,\s*/).filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4));
}
