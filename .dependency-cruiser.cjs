// The layering of @floodgate/core, checked by `npm test` (`npm run deps`):
// kernel <- cluster contract <- rule kinds <- cluster wrapper <- engine <- http / decorators / metrics / sources / sentinel / rules <- adapters, exporters.
// The kernel knows no kind: system protection's probe lives in system/, cluster mode's contract in cluster/.
// Type-only imports count too: a cycle of types is still a cycle to read.
const KINDS = '(authority|flow|circuit-breaker|hot-param|system|api-group|retry-budget|pushback|adaptive-throttling)';
const CORE = '^packages/core/src/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'No import cycles anywhere.', from: {}, to: { circular: true } },
    {
      name: 'kernel-stands-alone',
      severity: 'error',
      comment: 'The kernel imports nothing else in core.',
      from: { path: `${CORE}kernel/` },
      to: { path: CORE, pathNot: `${CORE}kernel/` },
    },
    {
      name: 'kinds-import-only-the-kernel',
      severity: 'error',
      comment:
        "A rule kind imports only the kernel, its own folder and cluster mode's contract: never the engine, another kind, the cluster wrapper, http or decorators.",
      from: { path: `${CORE}${KINDS}/` },
      to: { path: CORE, pathNot: [`${CORE}kernel/`, `${CORE}$1/`, `${CORE}cluster/cluster-contract\\.ts$`] },
    },
    {
      name: 'cluster-contract-on-the-kernel',
      severity: 'error',
      comment: "Cluster mode's contract (what backends implement, how kinds bind to it) imports only the kernel.",
      from: { path: `${CORE}cluster/cluster-contract\\.ts$` },
      to: { path: CORE, pathNot: `${CORE}kernel/` },
    },
    {
      name: 'cluster-wraps-through-the-kernel',
      severity: 'error',
      comment: 'The cluster wrapper knows kinds only through the kernel contract.',
      from: { path: `${CORE}cluster/` },
      to: { path: CORE, pathNot: [`${CORE}kernel/`, `${CORE}cluster/`] },
    },
    {
      name: 'engine-knows-kinds-through-their-list',
      severity: 'error',
      comment:
        'The engine imports the rule kinds in one module, kinds.ts (RULE_KINDS, the one place a kind is added); its other modules import none.',
      from: { path: `${CORE}engine/`, pathNot: `${CORE}engine/kinds\\.ts$` },
      to: { path: `${CORE}${KINDS}/` },
    },
    {
      name: 'engine-is-below-http-and-decorators',
      severity: 'error',
      comment:
        "The engine composes kinds; http, decorators, metrics, rule sources, Sentinel's rule format and the rules entry point build on it, never the reverse.",
      from: { path: `${CORE}(engine|kernel|cluster|${KINDS.slice(1, -1)})/` },
      to: { path: `${CORE}(http|decorators|metrics|sources|sentinel|rules)/` },
    },
    {
      name: 'http-and-decorators-apart',
      severity: 'error',
      comment: 'The HTTP layer, the decorators and the metrics reader do not know each other.',
      from: { path: `${CORE}(http|decorators|metrics)/` },
      to: { path: `${CORE}(http|decorators|metrics)/`, pathNot: `${CORE}$1/` },
    },
    {
      name: 'testing-builds-on-the-kernel',
      severity: 'error',
      comment:
        "The test helpers (ManualClock, ManualProbe) implement the kernel's clock and system protection's probe contracts, and import nothing else.",
      from: { path: `${CORE}testing/` },
      to: { path: CORE, pathNot: [`${CORE}kernel/`, `${CORE}testing/`, `${CORE}system/system-probe\\.ts$`] },
    },
    {
      name: 'packages-use-core-entry-points',
      severity: 'error',
      comment: "Other packages import @floodgate/core's public entry points, never its files.",
      from: { path: '^packages/(?!core/)[^/]+/src/' },
      to: {
        path: '^packages/core/src/(?!index\\.ts$|rules/index\\.ts$|http/index\\.ts$|cluster/index\\.ts$|metrics/index\\.ts$|testing/index\\.ts$|sentinel/index\\.ts$)',
      },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.check.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['@floodgate/source', 'import', 'require', 'node', 'default'],
    },
  },
};
