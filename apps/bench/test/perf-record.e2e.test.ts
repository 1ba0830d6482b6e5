/**
 * `--perf`: a Parley server sampled by `perf record` while a small S1 runs. Once it stops, its
 * JavaScript frames carry the names of the code that ran (node's JIT dump injected by
 * `perf inject --jit`, one ELF file per code object in the `.jit` folder), and the phases file
 * gives each measured phase as a window that `perf report --time` takes and finds samples in.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { installCleanup } from '../src/children.ts';
import { startParleyDriver } from '../src/drivers/parley.ts';
import { oneToOneUsers, runOneToOne } from '../src/scenarios/one-to-one.ts';

const perfWorks = spawnSync('perf', ['--version']).status === 0;
// The server runs in the `.jit` folder (node writes its JIT dump into its working directory), so
// tsx is imported by its absolute path rather than resolved from there.
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const dir = mkdtempSync(join(tmpdir(), 'parley-bench-perf-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!perfWorks)('--perf', () => {
  it('names the JavaScript frames and writes the measured phases as perf time windows', async () => {
    installCleanup();
    const file = join(dir, 'parley-jsonrpc-S1-test.perf.data');
    const driver = await startParleyDriver('jsonrpc', ['--conditions=@parley/source', '--import', tsxLoader], file, {}, 997);
    try {
      await driver.provisionUsers(oneToOneUsers(20, 'perf'));
      const [r] = await runOneToOne(driver, {
        pairs: 20,
        rates: [400],
        phaseSeconds: 1,
        warmupSeconds: 0.3,
        bodyBytes: 32,
        log: () => undefined,
        drainMs: 3000,
        uidPrefix: 'perf',
      });
      expect(r!.valid).toBe(true);
    } finally {
      await driver.stop();
    }

    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}.raw`)).toBe(false);
    // Recorded at the rate asked for (`--perf-hz`), not perf's or the bench's default.
    const header = execFileSync('perf', ['evlist', '-v', '-i', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(header).toMatch(/sample_freq \}?: 997(?!\d)/);
    const jitDir = join(dir, 'parley-jsonrpc-S1-test.jit');
    const jitted = readdirSync(jitDir);
    expect(jitted.filter((f) => /^jitted-\d+-\d+\.so$/.test(f)).length).toBeGreaterThan(100);
    // The injection's input is gone once used.
    expect(jitted.filter((f) => f.endsWith('.dump') || f.endsWith('.log'))).toEqual([]);

    const phases = readFileSync(`${file}.phases`, 'utf8').trimEnd().split('\n');
    expect(phases.map((l) => l.split('\t')[0])).toEqual(['warm-up', '400 msg/s']);
    const [start, end] = phases[1]!.split('\t')[1]!.split(',').map(Number);
    expect(end! - start!).toBeGreaterThan(0.9);
    expect(end! - start!).toBeLessThan(5);

    // The measured phase's samples, every frame with the object it ran in: some in JIT code, named.
    const frames = execFileSync('perf', ['script', '-i', file, '--time', phases[1]!.split('\t')[1]!, '-F', 'ip,sym,dso'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const jsFrames = frames.split('\n').filter((l) => /\(.*\/jitted-\d+-\d+\.so\)/.test(l));
    expect(jsFrames.length).toBeGreaterThan(0);
    expect(jsFrames.some((l) => /JS:\S* \S*\/apps\/server\/src\//.test(l))).toBe(true);
  }, 90_000);
});
