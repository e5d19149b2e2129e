// IPv4 arithmetic used by inventory validation.
import { describe, expect, it } from 'vitest';
import { contains, formatIPv4, nthAddress, overlaps, parseCidr, parseIPv4, within } from '../../src/net/ipv4.ts';

const net = (t: string) => {
  const r = parseCidr(t);
  if (!r.ok) throw new Error(r.reason);
  return r.net;
};

describe('ipv4', () => {
  it('parses and formats addresses, refusing malformed ones', () => {
    expect(formatIPv4(parseIPv4('10.240.0.21')!)).toBe('10.240.0.21');
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffff);
    for (const bad of ['256.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', 'a.b.c.d', '', '1..2.3']) {
      expect(parseIPv4(bad), bad).toBeUndefined();
    }
  });

  it('refuses host bits and names the network that was meant', () => {
    expect(parseCidr('10.200.1.7/24')).toEqual({ ok: false, reason: '"10.200.1.7/24" has host bits set', meant: '10.200.1.0/24' });
    expect(parseCidr('10.0.0.0/0').ok).toBe(false);
    expect(parseCidr('0.0.0.0/0').ok).toBe(true);
  });

  it('computes containment and overlap', () => {
    expect(within(net('10.200.3.0/24'), net('10.200.0.0/16'))).toBe(true);
    expect(within(net('10.201.0.0/24'), net('10.200.0.0/16'))).toBe(false);
    expect(overlaps(net('10.200.0.0/23'), net('10.200.1.0/24'))).toBe(true);
    expect(overlaps(net('10.200.0.0/24'), net('10.200.1.0/24'))).toBe(false);
    expect(contains(net('10.32.0.0/24'), parseIPv4('10.32.0.255')!)).toBe(true);
    expect(nthAddress(net('10.32.0.0/24'), 1)).toBe('10.32.0.1');
  });
});
