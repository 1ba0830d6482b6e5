/**
 * Directory discovery: marker files, the format major version gate, the current
 * MANIFEST (marker at format >= 2, CURRENT below), the latest OPTIONS file and
 * the WAL files. Only reads; never creates, locks or renames anything.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PebbleCorruptionError, PebbleError, PebbleUnsupportedError } from './errors.ts';

/** Newest format major version this reader understands (Pebble v1.0.0's FormatNewest). */
export const MAX_FORMAT_MAJOR_VERSION = 14;

/** What the directory listing tells before any file is parsed. */
export interface Discovery {
  dir: string;
  formatMajorVersion: number;
  /** Name of the current MANIFEST, e.g. `MANIFEST-000006`. */
  manifestName: string;
  /** Latest OPTIONS file name, if any, and the settings read from it. */
  optionsName: string | undefined;
  options: Map<string, string>;
  /** `.log` files present: number → name, all of them (filtered later by the MANIFEST's log number). */
  logs: { num: number; name: string }[];
  /** Every file name in the directory. */
  files: string[];
}

interface Marker {
  iter: number;
  value: string;
  file: string;
}

/** Lists `dir` and resolves markers, the format version and the manifest name. */
export function discover(dir: string): Discovery {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new PebbleError(`pebble: database directory ${dir} does not exist`);
  const files = readdirSync(dir).sort();
  const markers = readMarkers(dir, files);
  const fmt = markers.get('format-version');
  let formatMajorVersion = 1;
  if (fmt) {
    if (!/^\d+$/.test(fmt.value))
      throw new PebbleCorruptionError(join(dir, fmt.file), undefined, `format-version marker value "${fmt.value}" is not a number`);
    formatMajorVersion = Number(fmt.value);
  }
  if (formatMajorVersion > MAX_FORMAT_MAJOR_VERSION) {
    throw new PebbleUnsupportedError(
      `pebble: ${dir} is at format major version ${formatMajorVersion}; this reader supports up to ${MAX_FORMAT_MAJOR_VERSION} ` +
        `(Pebble v1.0.0). The directory was opened by a newer Pebble and may hold structures this reader cannot parse.`,
    );
  }
  if (formatMajorVersion < 1)
    throw new PebbleCorruptionError(join(dir, fmt?.file ?? ''), undefined, `invalid format major version ${formatMajorVersion}`);
  const optionsFiles = files.filter((f) => /^OPTIONS-\d+$/.test(f)).sort((a, b) => num(a) - num(b));
  const optionsName = optionsFiles.at(-1);
  const options = optionsName ? parseOptions(join(dir, optionsName)) : new Map<string, string>();
  const manifestName = formatMajorVersion >= 2 ? manifestFromMarker(dir, markers) : manifestFromCurrent(dir);
  if (!/^MANIFEST-\d+$/.test(manifestName)) throw new PebbleCorruptionError(dir, undefined, `invalid manifest name "${manifestName}"`);
  if (!files.includes(manifestName))
    throw new PebbleCorruptionError(join(dir, manifestName), undefined, 'current MANIFEST file is missing');

  const logs = files
    .filter((f) => /^\d+\.log$/.test(f))
    .map((name) => ({ num: Number(name.slice(0, -4)), name }))
    .sort((a, b) => a.num - b.num);
  return { dir, formatMajorVersion, manifestName, optionsName, options, logs, files };
}

function num(name: string): number {
  return Number(name.slice(name.indexOf('-') + 1));
}

/** Highest-iteration marker per name; every `marker.` file must parse. */
function readMarkers(dir: string, files: string[]): Map<string, Marker> {
  const out = new Map<string, Marker>();
  for (const file of files) {
    if (!file.startsWith('marker.')) continue;
    const m = /^marker\.([^.]+)\.(\d+)\.(.+)$/.exec(file);
    if (!m) throw new PebbleCorruptionError(join(dir, file), undefined, 'unparsable marker file name');
    const [, name, iter, value] = m as unknown as [string, string, string, string];
    const prev = out.get(name);
    if (!prev || Number(iter) > prev.iter) out.set(name, { iter: Number(iter), value, file });
  }
  return out;
}

function manifestFromMarker(dir: string, markers: Map<string, Marker>): string {
  const m = markers.get('manifest');
  if (!m) throw new PebbleCorruptionError(dir, undefined, 'no marker.manifest.* file although the format version is >= 2');
  return m.value;
}

function manifestFromCurrent(dir: string): string {
  const path = join(dir, 'CURRENT');
  if (!existsSync(path)) throw new PebbleError(`pebble: ${dir} has neither a manifest marker nor a CURRENT file; not a Pebble database`);
  const text = readFileSync(path, 'latin1');
  if (!text.endsWith('\n')) throw new PebbleCorruptionError(path, text.length, 'CURRENT does not end with a newline');
  return text.slice(0, -1);
}

/**
 * Parses an OPTIONS file (Pebble or RocksDB dialect) into `section.key` → value
 * (e.g. `Options.strict_wal_tail`). A line that is neither a section, a comment
 * nor `key=value` is corruption, as in Pebble.
 */
export function parseOptions(path: string): Map<string, string> {
  const out = new Map<string, string>();
  let section = '';
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    if (line.startsWith('[') && line.endsWith(']')) {
      section = line.slice(1, -1);
      return;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) throw new PebbleCorruptionError(path, undefined, `line ${i + 1}: invalid key=value syntax: "${line}"`);
    out.set(`${section}.${line.slice(0, eq).trim()}`, line.slice(eq + 1).trim());
  });
  return out;
}
