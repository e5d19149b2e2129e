// npm run build (also npm's `prepare`, so `npm ci` runs it): bundles src/ into dist/cli/ with
// esbuild, so the CLI starts without compiling TypeScript through tsx on every run (about 0.3 s).
// npm packages stay external. bin/hardway.mjs uses the bundle only while src/ is exactly what it
// was built from (dist/cli/stamp.json holds a hash of every file under src/); otherwise it falls
// back to tsx, so an edited source never runs stale.
// dist/cli sits two levels below the package root like every file of src/*/, so paths found from
// import.meta.url (templates/, units/, src/download/versions.json) are the same in both.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sourceStamp } from '../bin/source-stamp.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = `${root}dist/cli`;

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.error('build: esbuild is not installed; hardway runs its TypeScript through tsx (slower start)');
  process.exit(0);
}
const handlebarsModule = await import('handlebars');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const stamp = sourceStamp(root);
await esbuild.build({
  entryPoints: [`${root}src/cli.ts`],
  bundle: true,
  // Lazily loaded commands and listr2 stay lazy: each dynamic import gets its own chunk.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  outdir: out,
  logLevel: 'warning',
});
writePrecompiledTemplates(`${out}/precompiled-templates.cjs`);
writeFileSync(`${out}/stamp.json`, JSON.stringify({ sources: stamp }) + '\n');
console.log(`build: dist/cli from src/ (${stamp.slice(0, 12)})`);

/**
 * The templates of templates/ and units/, compiled here once: compiling them cost every run about
 * 0.15 s of CPU (a no-op `up` on 3 machines takes ~1 s in all). src/render/templates.ts uses one
 * only while the file's SHA-256 is the one compiled, so an edited template is compiled afresh.
 */
function writePrecompiledTemplates(file) {
  const Handlebars = handlebarsModule.default;
  const entries = [];
  for (const dir of ['templates', 'units']) {
    for (const f of readdirSync(`${root}${dir}`).filter((n) => n.endsWith('.hbs')).sort()) {
      const source = readFileSync(`${root}${dir}/${f}`, 'utf8');
      const sha256 = createHash('sha256').update(source).digest('hex');
      // The same options as compileTemplate in src/render/templates.ts.
      const spec = Handlebars.precompile(source, { strict: true, noEscape: true });
      entries.push(`  ${JSON.stringify(`${dir}/${f}`)}: { sha256: ${JSON.stringify(sha256)}, spec: ${spec} },`);
    }
  }
  writeFileSync(file, `// Made by scripts/build.mjs from templates/ and units/: do not edit.\nmodule.exports = {\n${entries.join('\n')}\n};\n`);
}
