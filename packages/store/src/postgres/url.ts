/**
 * `store.postgres_url`: a standard PostgreSQL connection string. Parley's
 * tables live in the schema its `search_path` names, given the way libpq
 * passes server settings at connection start:
 *
 *   postgres://user@host:5432/db?options=-c%20search_path%3Dparley_a
 *
 * (the URL-encoded form of `options=-c search_path=parley_a`). Without one
 * the schema is `public`. Several clusters or test runs share one database by
 * naming different schemas. The schema is created when missing.
 */

/** Query parameters passed on to the driver; anything else is refused rather than ignored. */
const KNOWN_PARAMS = new Set(['options', 'sslmode', 'sslcert', 'sslkey', 'sslrootcert', 'application_name', 'connect_timeout']);

/** A schema name Parley accepts: an unquoted lower-case identifier (PostgreSQL folds unquoted names to lower case). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A `store.postgres_url` that cannot be used; the message never holds the password. */
export class PostgresUrlError extends Error {
  constructor(message: string) {
    super(`store.postgres_url: ${message}`);
    this.name = 'PostgresUrlError';
  }
}

/** A checked connection string. */
export interface PostgresLocation {
  /** The connection string as given (holds the password, if any: never log it). */
  url: string;
  /** The schema Parley's tables live in. */
  schema: string;
  /** Host, port and database. */
  host: string;
  port: number;
  database: string;
  /** For logs and errors: the URL with the password replaced by `***`. */
  display: string;
}

/** Splits libpq `options` (`-c a=b -c c=d`, also `--a=b`) into settings; other words are refused. */
function settingsOf(options: string): Map<string, string> {
  const words = options.trim().split(/\s+/).filter(Boolean);
  const out = new Map<string, string>();
  for (let i = 0; i < words.length; i++) {
    let w = words[i]!;
    if (w === '-c') {
      const next = words[++i];
      if (next === undefined) throw new PostgresUrlError('`options` ends with -c and no setting');
      w = next;
    } else if (w.startsWith('-c')) w = w.slice(2);
    else if (w.startsWith('--')) w = w.slice(2);
    else throw new PostgresUrlError(`\`options\` holds "${w}"; only -c name=value settings are accepted`);
    const eq = w.indexOf('=');
    if (eq <= 0) throw new PostgresUrlError(`\`options\` setting "${w}" is not name=value`);
    out.set(w.slice(0, eq).toLowerCase().replace(/-/g, '_'), w.slice(eq + 1));
  }
  return out;
}

/** Checks a connection string and finds the schema its `search_path` names. */
export function parsePostgresUrl(url: string): PostgresLocation {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PostgresUrlError('not a URL (expected postgres://user@host:5432/database)');
  }
  const redacted = new URL(u.href);
  if (redacted.password !== '') redacted.password = '***';
  const display = redacted.href;
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new PostgresUrlError(`scheme "${u.protocol}" is not postgres: or postgresql: (${display})`);
  if (u.hostname === '') throw new PostgresUrlError(`no host (${display})`);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (database === '' || database.includes('/')) throw new PostgresUrlError(`no database name in the path (${display})`);
  for (const key of u.searchParams.keys()) {
    if (!KNOWN_PARAMS.has(key))
      throw new PostgresUrlError(`parameter "${key}" is not supported (accepted: ${[...KNOWN_PARAMS].join(', ')}) (${display})`);
  }
  let schema = 'public';
  const options = u.searchParams.get('options');
  if (options !== null) {
    const path = settingsOf(options).get('search_path');
    if (path !== undefined) {
      const first = path.split(',')[0]!.trim();
      if (!SCHEMA_NAME.test(first))
        throw new PostgresUrlError(
          `search_path "${path}": its first schema must be a lower-case name of letters, digits and _ (at most 63) (${display})`,
        );
      schema = first;
    }
  }
  return { url, schema, host: u.hostname, port: u.port === '' ? 5432 : Number(u.port), database, display };
}
