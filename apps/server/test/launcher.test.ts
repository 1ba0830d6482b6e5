import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCE_NODE_ARGS } from '../../../test-support/source-node.ts';
import { PARLEY_BIN } from './helpers.ts';

/** `bin/parley-node`: the shell launcher that picks node's GC flags and `exec`s bin/parley.js. */
const LAUNCHER = join(dirname(PARLEY_BIN), 'parley-node');
const hasTaskset = spawnSync('taskset', ['--version']).status === 0;

/** Runs the launcher (optionally on CPU 0 only) with `env`; node evaluates `code` (no spaces: PARLEY_NODE_FLAGS splits on them) instead of the CLI, or with `args` runs the CLI on the sources. */
function launch(env: Record<string, string>, opts: { oneCpu?: boolean; code?: string; args?: string[] } = {}) {
  const code = opts.code ?? 'process.stdout.write(JSON.stringify(process.execArgv))';
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  const flags = opts.args ? SOURCE_NODE_ARGS.join(' ') : `-e ${code}`;
  const [cmd, args] = opts.oneCpu ? ['taskset', ['-c', '0', LAUNCHER, ...(opts.args ?? [])]] : [LAUNCHER, opts.args ?? []];
  const r = spawnSync(cmd, args, { env: { ...base, PARLEY_NODE_FLAGS: flags, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, pid: r.pid };
}

describe('bin/parley-node', () => {
  it.skipIf(!hasTaskset)('runs node with --single-threaded-gc when the process may use one CPU', () => {
    const r = launch({}, { oneCpu: true });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toContain('--single-threaded-gc');
  });

  it.skipIf(availableParallelism() < 2)("keeps V8's parallel collector with more than one CPU", () => {
    const r = launch({});
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).not.toContain('--single-threaded-gc');
  });

  it("turns allocation-site pretenuring and the small heaps' memory reducer off in every mode, before the flags of PARLEY_NODE_FLAGS", () => {
    for (const mode of ['auto', 'single', 'parallel']) {
      const argv = JSON.parse(launch({ PARLEY_GC_THREADS: mode }).stdout) as string[];
      for (const flag of ['--no-allocation-site-pretenuring', '--no-memory-reducer-for-small-heaps']) {
        expect(argv).toContain(flag);
        expect(argv.indexOf(flag)).toBeLessThan(argv.indexOf('-e'));
      }
    }
  });

  it.skipIf(!hasTaskset)('PARLEY_GC_THREADS overrides the choice both ways', () => {
    expect(JSON.parse(launch({ PARLEY_GC_THREADS: 'parallel' }, { oneCpu: true }).stdout)).not.toContain('--single-threaded-gc');
    expect(JSON.parse(launch({ PARLEY_GC_THREADS: 'single' }).stdout)).toContain('--single-threaded-gc');
    expect(JSON.parse(launch({ PARLEY_GC_THREADS: 'auto' }, { oneCpu: true }).stdout)).toContain('--single-threaded-gc');
  });

  it('refuses an unknown PARLEY_GC_THREADS with exit status 2 and says what it takes', () => {
    const r = launch({ PARLEY_GC_THREADS: 'fast' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('PARLEY_GC_THREADS must be auto, single or parallel, not "fast"');
  });

  it('execs node: the launched pid is node itself', () => {
    const r = launch({}, { code: 'process.stdout.write(String(process.pid))' });
    expect(Number(r.stdout)).toBe(r.pid);
  });

  it("passes the CLI's arguments through, and the CLI accepts the launcher's own variables", () => {
    const r = launch({ PARLEY_GC_THREADS: 'single' }, { args: ['config', 'validate'] });
    expect(r.stderr).not.toContain('unknown variable');
    expect(r.code).toBe(0);
  });
});
