// The quoting template: whatever a value holds, the shell sees exactly that value as one word.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { joinCommands, quote, sh } from '../../src/shell.ts';

const echoArgs = (cmdText: string) =>
  execFileSync('/bin/sh', ['-c', `set -- ${cmdText}; for a in "$@"; do printf '%s\\0' "$a"; done`]).toString().split('\0').slice(0, -1);

describe('sh quoting', () => {
  it('passes hostile values through a real shell unchanged, one word each', () => {
    const values = ["it's", '$(reboot)', '`id`', 'a b', 'semi;colon', '*', '', 'new\nline', '"dq"', '\\back', '-n'];
    expect(echoArgs(sh`${values}`.text)).toEqual(values);
  });

  it('leaves safe words readable', () => {
    expect(sh`cat ${'/etc/hosts'} ${'node-0'}`.text).toBe('cat /etc/hosts node-0');
    expect(quote(6443)).toBe('6443');
  });

  it('nests commands without quoting them again', () => {
    const inner = sh`echo ${'a b'}`;
    expect(sh`sudo sh -c ${inner.text}`.text).toBe(`sudo sh -c 'echo '\\''a b'\\'''`);
    expect(sh`${inner} && true`.text).toBe(`echo 'a b' && true`);
    expect(joinCommands([sh`a`, sh`b ${'c d'}`]).text).toBe(`a && b 'c d'`);
  });
});
