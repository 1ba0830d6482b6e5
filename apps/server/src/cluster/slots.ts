import { CMD_SUFFIX, crc32 } from '@parley/shared';

/**
 * Where a channel lives in a cluster. A channel id hashes (CRC-32 of its
 * UTF-8 bytes) into one of `hashSlotCount` hash slots; hash slots map onto
 * `slotCount` physical slots in contiguous ranges; each physical slot has one
 * owner at a time (a lease in PostgreSQL), which sequences every channel in it.
 * A channel's command log (`<id>____cmd`) lives with the channel.
 */
export class SlotTable {
  constructor(
    readonly slotCount: number,
    readonly hashSlotCount: number,
  ) {
    if (!Number.isInteger(slotCount) || slotCount < 1 || slotCount > hashSlotCount) {
      throw new RangeError(`slot count must be 1..${hashSlotCount}`);
    }
  }

  /** The hash slot of a channel id (command-log suffix ignored). */
  hashSlotOf(channelId: string): number {
    const source = channelId.endsWith(CMD_SUFFIX) ? channelId.slice(0, -CMD_SUFFIX.length) : channelId;
    return crc32(source) % this.hashSlotCount;
  }

  /** The physical slot a hash slot belongs to. */
  slotOfHashSlot(hashSlot: number): number {
    return Math.floor((hashSlot * this.slotCount) / this.hashSlotCount);
  }

  /** The physical slot of a channel id. */
  slotOf(channelId: string): number {
    return this.slotOfHashSlot(this.hashSlotOf(channelId));
  }

  /** The hash slots of a physical slot, as an inclusive range. */
  hashSlotsOf(slot: number): { from: number; to: number } {
    const from = Math.ceil((slot * this.hashSlotCount) / this.slotCount);
    const to = Math.ceil(((slot + 1) * this.hashSlotCount) / this.slotCount) - 1;
    return { from, to };
  }
}

/**
 * How many slots a node should hold with `liveNodes` nodes sharing `slotCount`
 * slots: every node holds at least `floor` and at most `ceil`.
 */
export function slotQuota(slotCount: number, liveNodes: number): { floor: number; ceil: number } {
  const n = Math.max(1, liveNodes);
  return { floor: Math.floor(slotCount / n), ceil: Math.ceil(slotCount / n) };
}

/**
 * The slots a node holding `held` should give up so that another live node
 * can take them: only when it holds more than its ceiling and some live node
 * holds fewer than its floor (someone is there to take them), the highest
 * slot ids first, down to the ceiling.
 */
export function slotsToRelease(held: readonly number[], heldByNode: ReadonlyMap<number, number>, slotCount: number): number[] {
  const { floor, ceil } = slotQuota(slotCount, heldByNode.size);
  if (held.length <= ceil) return [];
  const someoneShort = [...heldByNode.values()].some((count) => count < floor);
  if (!someoneShort) return [];
  return [...held].sort((a, b) => b - a).slice(0, held.length - ceil);
}
