// Entry of a scan worker thread. Workers run the TypeScript sources like the CLI does (bin/parleyctl.js):
// tsx compiles each module once at load, whether the parent came from the bin, `--import tsx` or Vitest.
import { register } from 'tsx/esm/api';

register();
const { serveScanJobs } = await import('./scan-worker.ts');
serveScanJobs();
