/**
 * Socket I/O below Node's stream machinery, shared by the server's gateways and
 * the clients of this package: whole-frame writes straight to a socket's libuv
 * handle and reads taken from the handle before the Readable (direct-write.ts).
 */
export { DirectWriter, directWrites, takeReads, type ReadTaker } from './direct-write.ts';
export {
  joinReadGroup,
  leaveReadGroup,
  readPumpImplementation,
  readPumpStats,
  setReadPumpEnabled,
  readPumpEnabled,
  type ReadGroup,
  type ReadPumpImplementation,
} from './read-pump.ts';
