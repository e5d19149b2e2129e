// Each remote command is an ordered list of step names (registered in src/steps/index.ts).

/** The steps each remote command runs, in order. */
export const COMMAND_STEPS: Record<string, readonly string[]> = {
  'pin-hosts': ['pin-hosts'],
  distribute: ['distribute'],
  'bootstrap-etcd': ['bootstrap-etcd'],
  'bootstrap-control-plane': ['bootstrap-control-plane'],
  'bootstrap-workers': ['bootstrap-workers'],
  routes: ['routes'],
  verify: ['verify'],
  up: ['pin-hosts', 'distribute', 'bootstrap-etcd', 'bootstrap-control-plane', 'bootstrap-workers', 'routes', 'verify'],
};
