// `hardway version`: the version of package.json, as text or one JSON object; a command like the
// others, so that --help, --json and `hardway help version` work (--version and -V stay its short forms).
import { jsonOption, say, sayJson, type CommandModule } from '../cli/command.ts';
import { version } from '../cli/version.ts';

/** Prints hardway's version. */
export const versionCommand: CommandModule = {
  name: 'version',
  options: { json: jsonOption('{ok, version}') },
  examples: [
    ['hardway version', "print hardway's version (the same as hardway --version)"],
    ['hardway version --json', 'the same as one JSON object, for a script'],
  ],
  jsonFields: { version: '' },
  async run(ctx) {
    if (ctx.values.json) sayJson(ctx.stdout, { ok: true, version: version() });
    else say(ctx.stdout, version());
    return 0;
  },
};
