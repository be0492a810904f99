import type { PurgeResult } from './purge.js';

/** Names every file a purge removed because it could not be filtered (docs/decisions.md, Deletion: named in the log). */
export function reportPurgeRemovals(purged: PurgeResult, progress: (m: string) => void): void {
  for (const file of purged.archivesUnreadable)
    progress(`purge: ${file}: unreadable, so it cannot be filtered: removed`);
  for (const file of purged.routeFilesDamaged)
    progress(`purge: ${file}: damaged, never rewritten: removed (the publish writes it again from the warehouse)`);
}
