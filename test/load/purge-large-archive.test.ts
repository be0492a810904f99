import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadStream, createWriteStream, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { workspace, type Workspace } from '../helpers/workspace.js';
import { recordDeletionIn } from '../helpers/deletions.js';
import { runJobProcess } from '../helpers/job-process.js';

// An archived NDJSON.gz whose content is over 2 GiB (beyond what one Buffer or string holds), small
// on disk: the purge streams it, so it succeeds and its memory stays far below the file's size.
const LEAVER = 987_654;
const KEEPER_LINES_PER_CHUNK = 1024;
const CHUNKS = 560; // 560 x 1024 lines of 4 KiB: 2.2 GiB
let ws: Workspace;
let file: string;

const leaverLine = (appId: string, n: number) =>
  JSON.stringify({ appId, platformUserId: LEAVER, orgUserId: `leaver-${LEAVER}`, tripId: `leaver-${n}` });
const keeperLine = (appId: string) => {
  const head = JSON.stringify({ appId, platformUserId: 202, orgUserId: 'keeper', tripId: 'keeper-1', pad: '' });
  return `${head.slice(0, -2)}${'x'.repeat(4095 - head.length)}"}`;
};

/** Lines of the file, and how many name the leaver and the keeper, read back streaming. */
async function countLines(path: string): Promise<{ lines: number; leaver: number; keeper: number; bytes: number }> {
  const out = { lines: 1, leaver: 0, keeper: 0, bytes: 0 };
  const leaver = Buffer.from(String(LEAVER));
  const keeper = Buffer.from('"keeper"');
  const classify = (line: Buffer) => {
    if (line.includes(leaver)) out.leaver++;
    else if (line.includes(keeper)) out.keeper++;
  };
  let rest = Buffer.alloc(0);
  await pipeline(createReadStream(path), createGunzip(), async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) {
      out.bytes += chunk.length;
      const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      let at = 0;
      for (let end = data.indexOf(0x0a, at); end >= 0; end = data.indexOf(0x0a, at)) {
        classify(data.subarray(at, end));
        out.lines++;
        at = end + 1;
      }
      rest = Buffer.from(data.subarray(at));
    }
  });
  // the last line, without a newline after it
  classify(rest);
  return out;
}

beforeAll(async () => {
  ws = await workspace('Europe/Berlin');
  const dir = join(ws.paths.landingDir, 'loaded', '2026-11-20');
  mkdirSync(dir, { recursive: true });
  file = join(dir, 'huge.ndjson.gz');
  const chunk = Buffer.from(
    `${Array.from({ length: KEEPER_LINES_PER_CHUNK }, () => keeperLine(ws.appId)).join('\n')}\n`,
  );
  async function* content(): AsyncGenerator<Buffer> {
    yield Buffer.from(`${leaverLine(ws.appId, 1)}\n`);
    for (let i = 0; i < CHUNKS; i++) {
      yield chunk;
      if (i === CHUNKS / 2) yield Buffer.from(`${leaverLine(ws.appId, 2)}\n`);
    }
    yield Buffer.from(leaverLine(ws.appId, 3));
  }
  await pipeline(content, createGzip({ level: 1 }), createWriteStream(file));
  await recordDeletionIn(ws.dir, {
    appId: ws.appId,
    platformUserId: LEAVER,
    orgUserId: `leaver-${LEAVER}`,
    requestedAt: '2026-11-21T08:00:00Z',
  });
});
afterAll(() => ws.cleanup());

describe('purge: an archive over 2 GiB', () => {
  it("is rewritten without the driver's lines, streaming, in bounded memory", async () => {
    const before = await countLines(file);
    expect(before.bytes).toBeGreaterThan(2 ** 31);
    expect(before).toMatchObject({ leaver: 3, keeper: CHUNKS * KEEPER_LINES_PER_CHUNK });
    const stored = statSync(file).size;

    const ran = await runJobProcess('purge', ['--data-dir', ws.dir, '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    const result = JSON.parse(ran.stdout) as {
      purged: { archivesRewritten: number; opened: { archives: { files: number; bytes: number } } };
      peakRssBytes: number;
    };
    expect(result.purged.archivesRewritten).toBe(1);
    expect(result.purged.opened.archives).toEqual({ files: 1, bytes: stored });
    // a purge that read the file whole would hold over 2 GiB (and could not: a Buffer stops short of it)
    expect(result.peakRssBytes).toBeGreaterThan(0);
    expect(result.peakRssBytes).toBeLessThan(600 * 2 ** 20);

    const after = await countLines(file);
    // every line is still there (the driver's now empty), the keeper's all kept
    expect(after).toEqual({ ...before, leaver: 0, bytes: before.bytes - 3 * leaverLine(ws.appId, 1).length });
  });
});
