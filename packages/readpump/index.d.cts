/** The native read pump (src/readpump.c): one epoll set of sockets, read in one call per event-loop turn. */
export interface ReadPumpNative {
  /**
   * Starts the pump: `callback(count, bytes)` is called once per event-loop
   * turn in which any added socket was readable, with `count` records in the
   * first `bytes` of `buffer` (at least `batchBytes` long): each a 32-bit id,
   * a 32-bit count (bytes read, 0 at the end of the stream, -errno of a failed
   * read; little-endian) and the bytes, padded to 4. A socket whose read ended
   * or failed is out of the set already. Once per process.
   */
  open(buffer: Uint8Array, callback: (count: number, bytes: number) => void): void;
  /** Adds a socket's descriptor (its reads stopped in Node first) under `id`: 0, or -errno. */
  add(fd: number, id: number): number;
  /** Removes a descriptor: 0, or -errno (-ENOENT when it was not in the set). */
  remove(fd: number): number;
  /** The batch buffer's least size. */
  readonly batchBytes: number;
  /** The most one read takes. */
  readonly readMax: number;
}

export declare const native: ReadPumpNative | undefined;
export declare const loadError: unknown;
