import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

/** Where the plans of large files loaded a slice at a time are kept, under the landing area (src/load/slices.ts). */
export const SLICES_DIR = '.slices';
/** A plan's file in its folder. */
export const PLAN_FILE = 'plan.json';

/** The file each plan folder is for (a plan never changes once written). */
const sources = new Map<string, string>();

/**
 * The landing files being loaded a slice at a time, by name, with when their last slice was
 * taken or finished (ms): a slice file is written into the plan's folder as its load starts and
 * removed when it ends, so the folder's modification time is the file's last progress. A file
 * that makes progress is not waiting in vain, however long ago it arrived.
 */
export function sliceProgress(landingDir: string): Map<string, number> {
  const out = new Map<string, number>();
  const root = join(landingDir, SLICES_DIR);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return out;
  }
  for (const name of names) {
    const dir = join(root, name);
    try {
      let source = sources.get(dir);
      if (source === undefined) {
        source = basename(
          String((JSON.parse(readFileSync(join(dir, PLAN_FILE), 'utf8')) as { source: unknown }).source),
        );
        sources.set(dir, source);
      }
      out.set(source, statSync(dir).mtimeMs);
    } catch {
      // a plan being written or removed: its file counts from its arrival
    }
  }
  return out;
}
