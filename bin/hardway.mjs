#!/usr/bin/env node
// Entry point: loads the TypeScript sources through tsx so a fresh clone runs without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
