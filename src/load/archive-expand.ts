import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { extractMember, MERGED, readSidecar, sidecarOf } from './archive-members.js';
import { startsMember } from './archive-merge.js';

/**
 * The archived files of `paths` as files of their own, for a load of the archive (restore.js): each
 * merged day file (src/load/archive-members.ts) becomes its members, written under their original
 * names to `scratchDir` in the order they were merged, before the day's loose files; its sidecar
 * is left out. `done` removes the copies.
 */
export async function membersAsFiles(
  paths: string[],
  scratchDir: string,
): Promise<{ files: string[]; done: () => void }> {
  const done = () => rmSync(scratchDir, { recursive: true, force: true });
  const files: string[] = [];
  let n = 0;
  try {
    for (const path of paths) {
      const name = basename(path);
      if (/^archive-\d+\.members\.idx$/.test(name)) continue;
      if (!MERGED.test(name)) {
        files.push(path);
        continue;
      }
      const sidecar = readSidecar(join(dirname(path), sidecarOf(name)));
      const at = files.findIndex((f) => dirname(f) === dirname(path));
      const members: string[] = [];
      for (const line of sidecar) {
        if (line.kind !== 'member') continue;
        // a member a purge moved out whose sidecar line a crash left: its bytes are zeros, it is elsewhere
        if (!startsMember(path, line.member_offset)) continue;
        const target = join(scratchDir, String(n++), line.name);
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        await extractMember(path, { offset: line.member_offset, length: line.member_length }, target);
        members.push(target);
      }
      // a day's merged files hold its older files: before its loose ones
      if (at >= 0) files.splice(at, 0, ...members);
      else files.push(...members);
    }
  } catch (error) {
    done();
    throw error;
  }
  return { files, done };
}
