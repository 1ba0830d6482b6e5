import { Group, Text } from '@mantine/core';
import { PRESSURE_BANDS, pressureBand } from '@parley/shared';
import { bandVar } from './levels.ts';

/**
 * A value drawn against its limit (depth vs capacity, inflight vs workers,
 * a score vs 1), with the 0.6 / 0.8 / 0.95 band marks, coloured by band.
 */
export function LimitBar({ fraction, label, width = 160 }: { fraction: number | undefined; label?: string; width?: number }) {
  if (fraction === undefined)
    return (
      <Text size="xs" c="dimmed">
        –
      </Text>
    );
  const band = pressureBand(fraction);
  return (
    <Group gap={6} wrap="nowrap">
      <div
        className="limit-bar"
        style={{ width }}
        data-band={band}
        role="meter"
        aria-valuemin={0}
        aria-valuemax={1}
        aria-valuenow={fraction}
      >
        <div className="limit-bar-fill" style={{ width: `${Math.round(fraction * 1000) / 10}%`, background: bandVar(band) }} />
        {Object.values(PRESSURE_BANDS).map((b) => (
          <div key={b} className="limit-bar-mark" style={{ left: `${b * 100}%` }} />
        ))}
      </div>
      {label !== undefined && (
        <Text size="xs" ff="monospace" className="num">
          {label}
        </Text>
      )}
    </Group>
  );
}
