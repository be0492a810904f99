import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fsutil.js';

export type Slot = 'a' | 'b';

/** The pointer the API follows: which slot file is current and what it holds. */
export interface Manifest {
  slot: Slot;
  file: string;
  /**
   * The serving pack beside the slot (absent when published without one): each section's layers,
   * oldest (the base) first, and the zones its local times are in.
   */
  pack?: {
    files: Record<'trips' | 'stats' | 'scores', string[]>;
    zones: Record<string, string>;
    /** SHA-256 (hex) of every file the pack names and of its extras file, by file name; the API verifies them before serving. */
    sha256?: Record<string, string>;
  };
  version: number;
  warehouseId: string;
  publishedAt: string;
}

export function readManifest(file: string): Manifest | null {
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

/** Switches readers to a new slot in one rename. */
export function writeManifest(file: string, manifest: Manifest): void {
  // readable by an API running as another user, like the slot files it points to
  writeFileAtomic(file, `${JSON.stringify(manifest, null, 2)}\n`, 0o644);
}

export function slotFile(publishedDir: string, slot: Slot): string {
  return join(publishedDir, `slot-${slot}.duckdb`);
}
