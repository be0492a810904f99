/** Who a valid passport token belongs to. */
export interface TokenHolder {
  appId: string;
  platformUserId: number;
  orgUserId: string;
  expiresMs: number;
}

/**
 * The active passport tokens by SHA-256 hash, in memory. The API process is the only writer of the
 * passport store, so this index is kept exact by the same methods that write it: a token check
 * never waits in the store's one-at-a-time queue behind token issuing or a deletion, and a flood
 * of made-up tokens costs one hash and one map lookup each.
 *
 * @example index.add(hash, { appId, platformUserId, orgUserId, expiresMs }); index.get(hash, Date.now())
 */
export class TokenIndex {
  private readonly byHash = new Map<string, TokenHolder>();
  private readonly byUser = new Map<number, Set<string>>();

  get size(): number {
    return this.byHash.size;
  }

  add(hash: string, holder: TokenHolder): void {
    this.byHash.set(hash, holder);
    let hashes = this.byUser.get(holder.platformUserId);
    if (!hashes) this.byUser.set(holder.platformUserId, (hashes = new Set()));
    hashes.add(hash);
  }

  /** The holder while the token is valid at `nowMs` (expired ones stay until the next sweep). */
  get(hash: string, nowMs: number): TokenHolder | null {
    const holder = this.byHash.get(hash);
    return holder && holder.expiresMs > nowMs ? holder : null;
  }

  /** Every token of account `platformUserId` stops resolving (the account was deleted). */
  forgetUser(platformUserId: number): void {
    for (const hash of this.byUser.get(platformUserId) ?? []) this.byHash.delete(hash);
    this.byUser.delete(platformUserId);
  }

  /** Drops tokens expired at `nowMs`, so the index holds about one validity period of tokens. */
  sweep(nowMs: number): number {
    let dropped = 0;
    for (const [hash, holder] of this.byHash) {
      if (holder.expiresMs <= nowMs) {
        this.remove(hash, holder);
        dropped += 1;
      }
    }
    return dropped;
  }

  private remove(hash: string, holder: TokenHolder): void {
    this.byHash.delete(hash);
    const hashes = this.byUser.get(holder.platformUserId);
    hashes?.delete(hash);
    if (hashes && hashes.size === 0) this.byUser.delete(holder.platformUserId);
  }
}
