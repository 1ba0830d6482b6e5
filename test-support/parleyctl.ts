/** `parleyctl` as a child process on the TypeScript sources, for the migrator's and the cluster's tests. */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCE_NODE_ARGS } from './source-node.ts';

export const PARLEYCTL = join(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'migrator', 'bin', 'parleyctl.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (the stage's report), undefined when it is not JSON. */
  report: any;
}

/** Runs `parleyctl <args>` and resolves when it exits, with its output and parsed report. */
export function parleyctl(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...SOURCE_NODE_ARGS, PARLEYCTL, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      let report: unknown;
      try {
        report = JSON.parse(stdout);
      } catch {
        report = undefined;
      }
      resolve({ code, stdout, stderr, report });
    });
  });
}
