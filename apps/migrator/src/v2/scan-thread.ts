// Entry of a scan worker thread, started by scan-pool.ts.
import { serveScanJobs } from './scan-worker.ts';

serveScanJobs();
