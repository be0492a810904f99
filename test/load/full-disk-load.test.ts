// A load that meets a full disk fails and leaves its files where they were: the disk, not the
// file, is at fault (src/machine-error.ts). The disk is filled between a file's staging and its
// merge, with room left for a reason file, so that only the classification keeps the file from
// being set aside as unreadable; once there is room the same file loads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { pathsFor } from '../../src/data-folder.js';
import { runLoad } from '../../src/jobs/load.js';
import { isMachineError } from '../../src/machine-error.js';
import { PassportStore } from '../../src/passport/store.js';
import { writeNdjson } from '../helpers/workspace.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { tripRecord } from '../helpers/trips.js';

const now = new Date('2026-11-21T12:00:00Z');

describe('a load on a full disk', () => {
  let disk: Tmpfs | string;
  beforeAll(() => {
    disk = mountTmpfs(96 * 1024 * 1024);
  });
  afterAll(() => {
    if (typeof disk !== 'string') disk.unmount();
  });

  it('fails, sets nothing aside, and loads the same file once there is room', async (context) => {
    if (typeof disk === 'string') return context.skip(disk);
    const full = disk;
    const dataDir = join(full.dir, 'data');
    const paths = pathsFor(dataDir);
    const { appId } = await new AppStore(paths.appsFile).add({ name: 'full disk', timeZone: 'UTC' });
    const passport = await PassportStore.open(paths.passportFile);
    const ids = await passport.ensureAccounts(appId, ['u-1']);
    passport.close();
    // the warehouse made and a first snapshot published while there is room
    await runLoad({ dataDir, now });
    // three hours of points: more than the room left once the disk is filled
    const file = writeNdjson(
      join(paths.landingDir, 'partner-1.ndjson'),
      [0, 1].map((i) =>
        tripRecord({
          appId,
          tripId: `long-${i}`,
          userId: ids.get('u-1') as number,
          orgUserId: 'u-1',
          start: `2026-11-20T0${2 + 4 * i}:00:00Z`,
          seconds: 3 * 3600,
          // speeds that vary, so that the points do not compress to nothing
          speed: (second) => 10 + ((second * 7919) % 97) / 20,
        }),
      ),
    );
    const filler = full.fill(16 * 1024);
    const failed = await runLoad({ dataDir, now }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).not.toBeNull();
    expect(isMachineError(failed)).toBe(true);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(paths.landingDir, 'failed'))).toBe(false);

    rmSync(filler);
    const loaded = await runLoad({ dataDir, now });
    expect(loaded.totals).toMatchObject({ files: 1, filesFailed: 0, tripsLoaded: 2 });
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(paths.landingDir, 'failed')) ? readdirSync(join(paths.landingDir, 'failed')) : []).toEqual(
      [],
    );
  });
});
