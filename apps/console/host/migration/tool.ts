import { spawn, type ChildProcess } from 'node:child_process';

/**
 * How the host starts `parleyctl`: a program and the arguments before the
 * tool's own (`node [flags] …/bin/parleyctl.js`). `parleyctl console` passes
 * itself, so the stages run with exactly the tool that serves the console.
 * Always spawned without a shell.
 */
export interface ToolCommand {
  command: string;
  args: readonly string[];
  /** Environment of the tool's processes (default: the host's). */
  env?: NodeJS.ProcessEnv;
}

/** Most stdout a probe (`version`, `db info`) may print, bytes. */
const PROBE_MAX_BYTES = 4 * 1024 * 1024;
/** Longest a probe may take, ms. */
const PROBE_TIMEOUT_MS = 60_000;

export function spawnTool(tool: ToolCommand, args: readonly string[]): ChildProcess {
  return spawn(tool.command, [...tool.args, ...args], { shell: false, stdio: ['ignore', 'pipe', 'pipe'], env: tool.env ?? process.env });
}

export interface ProbeResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why no exit code: could not start, timed out or printed too much. */
  failure?: string;
}

/** Runs a short `parleyctl` command to its end, bounded in time and output. */
export function runProbe(tool: ToolCommand, args: readonly string[], timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const child = spawnTool(tool, args);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let bytes = 0;
    let failure: string | undefined;
    const timer = setTimeout(() => {
      failure = `parleyctl ${args.join(' ')} did not finish within ${timeoutMs / 1000} s`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      bytes += d.length;
      if (bytes > PROBE_MAX_BYTES) {
        failure = `parleyctl ${args[0]} printed more than ${PROBE_MAX_BYTES} bytes`;
        child.kill('SIGKILL');
      } else out.push(d);
    });
    child.stderr!.on('data', (d: Buffer) => {
      if (err.length < 256) err.push(d);
    });
    child.on('error', (e) => {
      failure = `parleyctl could not be started: ${e.message}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code: failure ? null : code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        failure,
      });
    });
  });
}
