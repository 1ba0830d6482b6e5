import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Whether this process runs the TypeScript sources (tests, `npm run dev`) rather than dist/. */
const fromSources = import.meta.url.endsWith('.ts');

/**
 * Starts a worker thread on `entry`, a module named by its TypeScript source
 * (`new URL('./x.ts', import.meta.url)`). Compiled, the thread runs the `.js`
 * that the build wrote beside it. From the sources, the thread first loads
 * tsx and resolves workspace packages to their sources, as its parent does:
 * worker threads inherit neither tsx's hooks nor `--conditions`.
 */
export function startWorker(entry: URL, options: WorkerOptions = {}): Worker {
  if (!fromSources) return new Worker(new URL(entry.href.replace(/\.ts$/, '.js')), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { ...options, eval: true, execArgv: [...(options.execArgv ?? []), '--conditions=@parley/source'] });
}
