import pino, { type Logger } from 'pino';

/**
 * Paths never written to a log: credentials in bodies, params and headers.
 * Tokens must not reach logs even when a whole request object is logged.
 */
const REDACT = [
  'token',
  '*.token',
  '*.*.token',
  'params.token',
  'body.token',
  'req.headers.authorization',
  'req.headers.token',
  'headers.authorization',
  'authorization',
];

/** JSON log lines on stderr (stdout carries the machine-readable `listening` event). */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(2)): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { svc: 'parley' } }, destination);
}
