import { verdictRank } from '@parley/shared';

/** The four state colours, the same on every page (Mantine palette names). */
export const LEVEL_COLORS = ['green', 'yellow', 'orange', 'red'] as const;

/** Colour of a verdict or pressure level; an unknown level is coloured as degraded (its rank). */
export function levelColor(level: string | undefined): string {
  if (level === undefined || level === 'unknown') return 'gray';
  return LEVEL_COLORS[verdictRank(level)]!;
}

/** Colour of an alert severity (warning, error, critical). */
export function severityColor(level: string): string {
  return level === 'critical' ? 'red' : level === 'error' ? 'orange' : level === 'warning' ? 'yellow' : 'gray';
}

/** Colour of a node's reachability word. */
export function reachColor(kind: string): string {
  switch (kind) {
    case 'ready':
    case 'ok':
      return 'green';
    case 'not_ready':
    case 'unreachable':
    case 'timeout':
    case 'session_expired':
      return 'red';
    case 'warming_up':
      return 'blue';
    case 'unauthorized':
      return 'yellow';
    case 'bad_response':
    case 'bad_query':
    case 'server_error':
    case 'refused':
      return 'grape';
    default:
      return 'gray';
  }
}

/** CSS colour of a band for the bars (Mantine CSS variables). */
export function bandVar(level: string): string {
  return `var(--mantine-color-${levelColor(level)}-6)`;
}

/** Line colours of nodes in charts, by position. */
export const NODE_COLORS = ['#228be6', '#be4bdb', '#12b886', '#fd7e14', '#e64980', '#15aabf', '#7950f2', '#82c91e'];
