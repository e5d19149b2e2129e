// Why pods do not start, in their events' words: what a smoke test that timed out prints instead
// of kubectl's "timed out waiting for the condition". Pure readings of `kubectl get -o json`.

/** An event as `kubectl get events -o json` gives it, as far as saying why goes. */
interface EventObject {
  involvedObject?: { kind?: string; name?: string };
  type?: string;
  reason?: string;
  message?: string;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  firstTimestamp?: string | null;
}

/** The longest event message shown (FailedCreatePodSandBox messages run to kilobytes). */
const MESSAGE_MAX = 300;

const when = (e: EventObject) => Date.parse(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '') || 0;

/**
 * For each pod named, its last Warning event (else its last event) as `POD: REASON: MESSAGE`, or
 * that it has none; that no pod exists when none is named.
 */
export function podEventReasons(pods: readonly string[], eventsJson: string): string[] {
  if (pods.length === 0) return ['no pod of the deployment exists (its ReplicaSet could not create one)'];
  const events = eventsJson.trim() ? ((JSON.parse(eventsJson) as { items?: EventObject[] }).items ?? []) : [];
  return pods.map((pod) => {
    const mine = events.filter((e) => e.involvedObject?.kind === 'Pod' && e.involvedObject.name === pod).sort((a, b) => when(a) - when(b));
    const last = mine.filter((e) => e.type === 'Warning').pop() ?? mine.pop();
    if (!last) return `${pod}: no events`;
    const message = (last.message ?? '').trim().split('\n')[0]!;
    return `${pod}: ${last.reason ?? 'no reason'}: ${message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}...` : message}`;
  });
}
