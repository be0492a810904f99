// A score run's publish names the served trips and statistics layers again without opening them
// (src/publish/write-pack.ts, writeSection): SectionFile.readable decides from a layer's magic and the
// format and section that lead its footer. Checked here against SectionFile.open (which reads the
// whole footer) on the layers a real publish wrote and on damaged copies of them, and end to end: a
// score run reuses the unchanged layers, and writes a section anew whose layer is of another format.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { SectionFile } from '../../src/serving/pack.js';
import { EXTRAS_SUFFIX, SECTIONS, type Section } from '../../src/serving/format.js';
import { manifestOf, workspace, writeNdjson, type Workspace } from '../helpers/workspace.js';
import { tripRecord } from '../helpers/trips.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await workspace('Europe/Berlin');
});
afterEach(() => ws.cleanup());
const now = new Date('2026-11-21T12:00:00Z');

async function loadAndScore(): Promise<void> {
  const trip = (id: string, user: number, start: string) =>
    tripRecord({ appId: ws.appId, tripId: id, userId: user, orgUserId: `d-${user}`, start, seconds: 900 });
  await runLoad({
    dataDir: ws.dir,
    now,
    inputs: [
      writeNdjson(join(ws.dir, 'in', '1.ndjson'), [
        trip('a', 1, '2026-11-19T08:00:00+01:00'),
        trip('b', 2, '2026-11-18T17:30:00+01:00'),
        trip('c', 1, '2026-11-20T07:00:00+01:00'),
      ]),
    ],
  });
  await runScore({ dataDir: ws.dir, date: '2026-11-21', now });
}

const opens = (file: string, section: Section): boolean => {
  try {
    SectionFile.open(file, section).close();
    return true;
  } catch {
    return false;
  }
};

describe('a served layer a publish names again unopened', () => {
  it('is readable exactly when it opens: intact, another format, another section, no magic, cut short, no extras, missing', async () => {
    await loadAndScore();
    const pack = manifestOf(ws.paths)?.pack;
    expect(pack).toBeDefined();
    let cases = 0;
    for (const section of SECTIONS) {
      const layer = join(ws.paths.publishedDir, pack?.files[section][0] as string);
      const copy = (name: string, change: (bytes: Buffer) => Buffer | null, extras = true): string => {
        const file = join(ws.dir, `${section}-${name}.pack`);
        const bytes = change(readFileSync(layer));
        if (bytes) writeFileSync(file, bytes);
        if (extras) copyFileSync(`${layer}${EXTRAS_SUFFIX}`, `${file}${EXTRAS_SUFFIX}`);
        return file;
      };
      const replaced = (from: string, to: string) => (bytes: Buffer) => {
        const at = bytes.lastIndexOf(from);
        expect(at).toBeGreaterThan(0);
        const out = Buffer.from(bytes);
        out.write(to, at, 'latin1');
        return out;
      };
      const format = /"format":(\d+)/.exec(readFileSync(layer).toString('latin1'))?.[1] as string;
      const other = SECTIONS.find((s) => s !== section && s.length === section.length);
      const files: [string, boolean][] = [
        [layer, true],
        [copy('format', replaced(`"format":${format}`, `"format":${Number(format) - 1}`)), false],
        [copy('magic', replaced('DDSPACK5', 'DDSPACK3')), false],
        [copy('short', (b) => b.subarray(0, b.length - 3)), false],
        [copy('no-extras', (b) => b, false), false],
        [join(ws.dir, 'missing.pack'), false],
        ...(other
          ? [[copy('section', replaced(`"section":"${section}"`, `"section":"${other}"`)), false] as [string, boolean]]
          : []),
      ];
      const empty = copy('empty', (b) => b);
      truncateSync(empty, 0);
      files.push([empty, false]);
      for (const [file, expected] of files) {
        expect([file, SectionFile.readable(file, section)]).toEqual([file, expected]);
        expect([file, opens(file, section)]).toEqual([file, expected]);
        cases++;
      }
    }
    expect(cases).toBeGreaterThanOrEqual(3 * 7);
  });

  it('keeps the trips and statistics layers of a score run, and writes anew a section whose layer is of another format', async () => {
    await loadAndScore();
    const before = manifestOf(ws.paths)?.pack?.files;
    await runScore({ dataDir: ws.dir, date: '2026-11-22', now: new Date('2026-11-22T12:00:00Z') });
    const after = manifestOf(ws.paths)?.pack?.files;
    expect(after?.trips).toEqual(before?.trips);
    expect(after?.stats).toEqual(before?.stats);
    expect(after?.scores).not.toEqual(before?.scores);

    // the statistics layer of another format (its checksum left as it was: the format decides)
    const stats = join(ws.paths.publishedDir, after?.stats[0] as string);
    const bytes = readFileSync(stats);
    const at = bytes.lastIndexOf('"format":5');
    expect(at).toBeGreaterThan(0);
    bytes.write('"format":4', at, 'latin1');
    writeFileSync(stats, bytes);
    await runScore({ dataDir: ws.dir, date: '2026-11-23', now: new Date('2026-11-23T12:00:00Z') });
    const third = manifestOf(ws.paths)?.pack?.files;
    expect(third?.trips).toEqual(before?.trips);
    expect(third?.stats).not.toEqual(after?.stats);
    const rewritten = join(ws.paths.publishedDir, third?.stats[0] as string);
    expect(SectionFile.readable(rewritten, 'stats')).toBe(true);
    expect(opens(rewritten, 'stats')).toBe(true);
    rmSync(stats, { force: true });
  });
});
