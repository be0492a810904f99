// Standard data folders that several test files start from, built once per worker and run
// (helpers/built-folder.ts, sharedFolder) and handed out as copies. A file uses one where what it
// proves does not depend on the data's seed or size; its tests may change their copy freely.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { runGenerate } from '../../src/jobs/generate.js';
import { runLoad } from '../../src/jobs/load.js';
import { runScore } from '../../src/jobs/score.js';
import { sharedFolder } from './built-folder.js';
import { oneFile } from './one-file.js';
import { workspace, type Workspace } from './workspace.js';

/** The clock of the standard folders' load and score. */
export const FIXTURE_CLOCK = new Date('2026-11-20T12:00:00Z');

interface Keyed {
  /** The app's API key. */
  key: string;
}

/**
 * One Europe/Berlin app with an API key; 4 generated users over the 6 days up to 2026-11-19 (seed
 * 11), loaded as one file at FIXTURE_CLOCK (published, not scored). The generated files are not kept.
 */
export function berlinLoaded(): Promise<{ ws: Workspace; built: Keyed }> {
  return sharedFolder(
    'berlin-4x6-loaded',
    () => workspace('Europe/Berlin'),
    async (ws) => {
      const key = (await new AppStore(ws.paths.appsFile).rotateKey(ws.appId)).apiKey;
      const gen = join(ws.dir, 'generated');
      await runGenerate({
        dataDir: ws.dir,
        users: 4,
        days: 6,
        seed: 11,
        format: 'ndjson',
        endDate: '2026-11-19',
        out: gen,
      });
      // the days as one file: the folders' users do not depend on the days coming in separate files
      await runLoad({ dataDir: ws.dir, inputs: [oneFile(gen)], now: FIXTURE_CLOCK });
      rmSync(gen, { recursive: true, force: true });
      return { key };
    },
  );
}

/** berlinLoaded, then scored as of 2026-11-20 at FIXTURE_CLOCK (published again). */
export function berlinScored(): Promise<{ ws: Workspace; built: Keyed }> {
  let key = '';
  return sharedFolder(
    'berlin-4x6-scored-2026-11-20',
    async () => {
      const loaded = await berlinLoaded();
      key = loaded.built.key;
      return loaded.ws;
    },
    async (ws) => {
      await runScore({ dataDir: ws.dir, date: '2026-11-20', now: FIXTURE_CLOCK });
      return { key };
    },
  );
}
