/**
 * When a publish merges serving-pack layers (src/serving/format.ts). A publish adds one delta
 * layer (what changed since the served pack); then the newest layers are merged while the layer below
 * them weighs less than RATIO times all of them together, so each layer weighs at least RATIO
 * times the one above it. With a delta of the same size every day this is a binary counter: at
 * most about log2(days) layers, each row copied about log2(days) times in all, and the base
 * rewritten when the deltas together reach half its size (cost follows the new data, amortized,
 * instead of copying the whole history every day).
 */
export const MERGE_RATIO = 2;

/** More layers than this are merged whatever their weights (an API lookup reads each layer's index). */
export const MAX_LAYERS = 12;

/**
 * How many of the newest layers to merge into one (1: none), given each layer's weight (rows),
 * oldest (the base) first and the new delta last.
 */
export function layersToMerge(weights: number[], ratio = MERGE_RATIO, maxLayers = MAX_LAYERS): number {
  const n = weights.length;
  let k = 1;
  let above = weights[n - 1] ?? 0;
  while (k < n) {
    const below = weights[n - 1 - k] as number;
    if (below >= ratio * above && n - k + 1 <= maxLayers) break;
    above += below;
    k++;
  }
  return k;
}
