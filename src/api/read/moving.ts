/** A driver in transit between two cells, as the shared store records it (src/cells/move-record.ts). */
export interface MovingDriver {
  userId: number;
  from: string;
  to: string;
  /** The target's version that serves the driver (null: not arrived yet). */
  arrivedVersion: number | null;
}

/**
 * Which cell answers each moving driver when an answer spans every cell (the bulk export), given
 * the version of each cell's snapshot held for the answer: the source until the target's held
 * snapshot serves the version that holds the driver, then the target (the rule of
 * src/api/http/context.ts for one driver). The drivers to leave out of each cell, so that none is
 * streamed twice or not at all while it moves.
 */
export function leftOutPerCell(moving: MovingDriver[], held: Map<string, number>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const leave = (cell: string, userId: number) => out.set(cell, [...(out.get(cell) ?? []), userId]);
  for (const m of moving) {
    if (!held.has(m.from) || !held.has(m.to)) continue;
    const arrived = m.arrivedVersion !== null && (held.get(m.to) ?? 0) >= m.arrivedVersion;
    leave(arrived ? m.from : m.to, m.userId);
  }
  return out;
}
