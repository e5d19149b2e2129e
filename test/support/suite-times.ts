/**
 * A vitest reporter that times every test file (a "suite") by the wall clock, writes the times to a
 * JSON file as each ends (the budget check, test/e2e/budget.test.ts, reads it while the run goes
 * on), and prints them, slowest first, at the end of the run beside each project's total.
 *
 * The file is HARDWAY_SUITE_TIMES (set here for the workers when not given).
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/** One finished test file: its project, path, wall-clock seconds and outcome. */
export interface SuiteTime {
  project: string;
  file: string;
  seconds: number;
  state: string;
}

/** What the times file holds: when the run started (ms since the epoch) and each finished file. */
export interface SuiteTimes {
  startedAt: number;
  suites: SuiteTime[];
}

/** The reporter (vitest.config.ts lists it beside the default one). */
export default class SuiteTimesReporter implements Reporter {
  private root = process.cwd();
  private readonly started = new Map<string, number>();
  private readonly times: SuiteTimes = { startedAt: Date.now(), suites: [] };
  private file = '';

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    // Set before the workers start, so the budget test (in a worker) finds the same file.
    this.file = process.env.HARDWAY_SUITE_TIMES ??= `${tmpdir()}/hardway-suite-times-${process.pid}.json`;
    this.save();
  }

  onTestModuleStart(m: TestModule): void {
    this.started.set(m.moduleId, Date.now());
  }

  onTestModuleEnd(m: TestModule): void {
    const began = this.started.get(m.moduleId) ?? this.times.startedAt;
    this.times.suites.push({ project: m.project.name, file: relative(this.root, m.moduleId), seconds: (Date.now() - began) / 1000, state: m.state() });
    this.save();
  }

  onTestRunEnd(): void {
    const total = (Date.now() - this.times.startedAt) / 1000;
    const lines = ['', 'Suite times (wall clock, slowest first):'];
    for (const s of [...this.times.suites].sort((a, b) => b.seconds - a.seconds)) {
      lines.push(`  ${minutes(s.seconds).padStart(8)}  ${s.project.padEnd(5)} ${s.file}${s.state === 'passed' ? '' : ` (${s.state})`}`);
    }
    for (const project of [...new Set(this.times.suites.map((s) => s.project))]) {
      const mine = this.times.suites.filter((s) => s.project === project);
      lines.push(`  project ${project}: ${mine.length} files, ${minutes(mine.reduce((n, s) => n + s.seconds, 0))} added up`);
    }
    lines.push(`  the whole run: ${minutes(total)}`, '');
    process.stdout.write(lines.join('\n') + '\n');
  }

  private save(): void {
    writeFileSync(this.file, JSON.stringify(this.times));
  }
}

/** 125.4 -> "2m05s". */
export function minutes(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
