/**
 * Errors raised by the reader. Every corruption error names the file and, when
 * known, the byte offset inside it, so an operator can locate the damage.
 */

/** Base class of every error this package throws on purpose. */
export class PebbleError extends Error {
  override name = 'PebbleError';
}

/** The directory uses a feature or version this reader deliberately does not support. */
export class PebbleUnsupportedError extends PebbleError {
  override name = 'PebbleUnsupportedError';
}

/** On-disk data is damaged or inconsistent. `file` is the path, `offset` a byte offset in it (or undefined). */
export class PebbleCorruptionError extends PebbleError {
  override name = 'PebbleCorruptionError';
  constructor(
    readonly file: string,
    readonly offset: number | undefined,
    readonly detail: string,
  ) {
    super(`pebble: corruption in ${file}${offset === undefined ? '' : ` at offset ${offset}`}: ${detail}`);
  }
}
