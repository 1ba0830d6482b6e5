/** Twitter/bwmarrin epoch (2010-11-04T01:42:54.657Z), as WuKongIM uses. */
const EPOCH_MS = 1288834974657;
const STEP_BITS = 12;
const STEP_MASK = (1 << STEP_BITS) - 1;

/**
 * Snowflake message ids: 41 bits of ms since the epoch, 10 bits of node id,
 * 12 bits of per-ms step. Ids only grow within a process: a clock that steps
 * back, or a ms whose 4096 steps are used up, borrows the next ms.
 */
export function createSnowflake(nodeId: number, now: () => number = Date.now) {
  if (!Number.isInteger(nodeId) || nodeId < 1 || nodeId > 1023) throw new RangeError('node id must be 1..1023');
  const node = BigInt(nodeId) << BigInt(STEP_BITS);
  let lastMs = 0;
  let step = 0;
  return {
    next(): bigint {
      let ms = now() - EPOCH_MS;
      if (ms <= lastMs) {
        ms = lastMs;
        step = (step + 1) & STEP_MASK;
        if (step === 0) ms = lastMs + 1;
      } else {
        step = 0;
      }
      lastMs = ms;
      return (BigInt(ms) << 22n) | node | BigInt(step);
    },
  };
}

export type Snowflake = ReturnType<typeof createSnowflake>;
