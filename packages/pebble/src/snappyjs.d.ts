/** Minimal typing of the `snappyjs` package (raw Snappy block format, not framed). */
declare module 'snappyjs' {
  export function uncompress<T extends Uint8Array | ArrayBuffer>(compressed: T, maxLength?: number): T;
}
