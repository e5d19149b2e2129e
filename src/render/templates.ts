// Strict handlebars rendering of the files under templates/ and units/: a value the template asks
// for but the caller did not give is an error naming the template and the field, never an empty
// string in a config file; nothing is HTML-escaped (these are YAML, JSON, TOML and unit files).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Handlebars from 'handlebars';
// The runtime alone runs precompiled templates (the bundle's: the hot path); the compiler is loaded
// only when a template must be compiled (running from src/, or a template changed since the build).
import HandlebarsRuntime from 'handlebars/runtime.js';
import { FailureError } from '../errors.ts';

/** The package root, which holds templates/ and units/ (found from this file, not the cwd). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Renders template files by their path relative to a root, e.g. 'units/etcd.service.hbs'. */
export interface TemplateSet {
  render(name: string, values: object): string;
}

/** A template compiled by scripts/build.mjs, with the SHA-256 of the source it was compiled from. */
interface Precompiled {
  sha256: string;
  spec: TemplateSpecification;
}
type TemplateSpecification = Parameters<typeof Handlebars.template>[0];

/**
 * The package's templates as the CLI bundle's build compiled them (dist/cli/precompiled-templates.cjs,
 * beside the bundle's chunks); none when running from src/ through tsx.
 */
function packagePrecompiled(): Record<string, Precompiled> {
  try {
    return createRequire(import.meta.url)('./precompiled-templates.cjs') as Record<string, Precompiled>;
  } catch {
    return {};
  }
}

/** A template set reading from `root`; each file is read and compiled once per set. */
export function createTemplateSet(root: string = PACKAGE_ROOT): TemplateSet {
  // A private handlebars environment: no helper or partial registered elsewhere can leak in.
  const hb = (HandlebarsRuntime as unknown as typeof Handlebars).create();
  const precompiled = root === PACKAGE_ROOT ? packagePrecompiled() : {};
  const compiled = new Map<string, (values: object) => string>();
  return {
    render(name, values) {
      let fn = compiled.get(name);
      if (!fn) {
        let source: string;
        try {
          source = readFileSync(join(root, name), 'utf8');
        } catch (e) {
          throw new FailureError(`${name}: template not readable under ${root}: ${(e as Error).message}`,
            'the templates/ and units/ directories ship with hardway; reinstall it or restore the file');
        }
        // The build's compilation, if it was made from exactly this text.
        const built = precompiled[name];
        const spec = built && built.sha256 === createHash('sha256').update(source).digest('hex') ? built.spec : undefined;
        fn = compileTemplate(name, source, hb, spec);
        compiled.set(name, fn);
      }
      return fn(values);
    },
  };
}

/** Template sets by root, shared by every render of a process (templates do not change while it runs). */
const shared = new Map<string, TemplateSet>();

/**
 * The process's template set for `root`: each template is read and compiled once. A run renders
 * every machine's files for each step's plan and re-plan; compiling them each time cost ~0.3 s of
 * CPU on a 9-machine push.
 */
export function sharedTemplateSet(root: string = PACKAGE_ROOT): TemplateSet {
  let set = shared.get(root);
  if (!set) shared.set(root, (set = createTemplateSet(root)));
  return set;
}

/**
 * Compiles one template strictly (or takes `spec`, the same source precompiled with the same
 * options); the returned function throws FailureError naming `name` and the missing field.
 */
export function compileTemplate(name: string, source: string, hb?: typeof Handlebars, spec?: TemplateSpecification): (values: object) => string {
  // Compiling needs the full handlebars (a private environment of its own when none is given).
  // (The runtime environment of a template set has no `compile`.)
  const template = spec
    ? (hb ?? handlebarsCompiler().create()).template(spec)
    : (hb && typeof hb.compile === 'function' ? hb : handlebarsCompiler().create()).compile(source, { strict: true, noEscape: true });
  return (values) => {
    try {
      return template(values);
    } catch (e) {
      throw explain(name, source, e as Error);
    }
  };
}

/** The full handlebars (compiler and runtime), loaded on first use. */
function handlebarsCompiler(): typeof Handlebars {
  return createRequire(import.meta.url)('handlebars') as typeof Handlebars;
}

const MISSING = /^"(.+)" not defined in .* - (\d+):(\d+)$/s;

function explain(name: string, source: string, e: Error): FailureError {
  const m = MISSING.exec(e.message);
  if (m) {
    const line = Number(m[2]);
    const field = fullPath(source, line, Number(m[3])) ?? m[1]!;
    return new FailureError(`${name}: missing value "${field}" (line ${line})`,
      'the template asks for a value that rendering does not provide: a bug in the template or in src/render/');
  }
  // Compilation is lazy in handlebars, so syntax errors surface here too.
  return new FailureError(`${name}: cannot render: ${e.message.split('\n')[0]}`,
    'fix the template syntax ({{name}}, {{#each list}}...{{/each}})');
}

/** Handlebars names only the last segment ("b" of a.b); the source at its position has the whole path. */
function fullPath(source: string, line: number, column: number): string | undefined {
  const text = source.split('\n')[line - 1];
  return text === undefined ? undefined : /^[\w@./-]+/.exec(text.slice(column))?.[0];
}
