import { SYSTEM_UID } from '@parley/shared';
import type { ChannelRepository } from '@parley/store';

/**
 * System uids bypass send checks. The persisted set is loaded at start and
 * kept in memory; `*_to_cache` changes touch only this node's memory.
 */
export class SystemUidService {
  private readonly persisted = new Set<string>();
  private readonly cacheOnly = new Set<string>();
  /** Cluster mode: told when the persisted set changed, so other nodes read it again. */
  onPersistedChange: (() => void) | undefined;

  constructor(private readonly repo: ChannelRepository) {}

  async load(): Promise<void> {
    for (const uid of await this.repo.listSystemUids()) this.persisted.add(uid);
  }

  has(uid: string): boolean {
    return uid === SYSTEM_UID || this.persisted.has(uid) || this.cacheOnly.has(uid);
  }

  async add(uids: readonly string[]): Promise<void> {
    await this.repo.addSystemUids(uids);
    for (const uid of uids) this.persisted.add(uid);
    this.onPersistedChange?.();
  }

  /** Reads the persisted set again (another node changed it). */
  async reload(): Promise<void> {
    const fresh = await this.repo.listSystemUids();
    this.persisted.clear();
    for (const uid of fresh) this.persisted.add(uid);
  }

  async remove(uids: readonly string[]): Promise<void> {
    await this.repo.removeSystemUids(uids);
    for (const uid of uids) {
      this.persisted.delete(uid);
      this.cacheOnly.delete(uid);
    }
    this.onPersistedChange?.();
  }

  addToCache(uids: readonly string[]): void {
    for (const uid of uids) this.cacheOnly.add(uid);
  }

  removeFromCache(uids: readonly string[]): void {
    for (const uid of uids) {
      this.cacheOnly.delete(uid);
      this.persisted.delete(uid);
    }
  }

  /** The persisted set plus this node's cache-only entries, sorted. */
  list(): string[] {
    return [...new Set([...this.persisted, ...this.cacheOnly])].sort();
  }
}
