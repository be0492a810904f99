import { existsSync } from 'node:fs';
import { pathsFor } from '../data-folder.js';
import { AppStore, type App } from '../apps/store.js';
import { InputError } from '../errors.js';
import { sqliteFileOf } from '../state/db.js';
import { resolveDatabaseUrl } from '../state/open.js';

/**
 * The apps of a data folder, or bad input when it holds none: a mistyped `--data-dir` would
 * otherwise create an empty warehouse, export nothing or serve 503s, all "successfully". Every job
 * but `apps add` (which creates the first app) and the demo (which creates its own) starts here.
 */
export async function appsOf(dataDir: string): Promise<App[]> {
  if (!existsSync(dataDir)) throw noApps(dataDir, 'does not exist');
  const paths = pathsFor(dataDir);
  // opening the embedded store would create it: a folder without one (nor an earlier release's
  // apps.json to migrate) is refused untouched
  if (!resolveDatabaseUrl() && !existsSync(sqliteFileOf(dataDir)) && !existsSync(paths.appsFile))
    throw noApps(dataDir, 'holds no apps (no state store)');
  const apps = await new AppStore(pathsFor(dataDir).appsFile).list();
  if (apps.length > 0) return apps;
  throw noApps(dataDir, 'holds no apps');
}

function noApps(dataDir: string, why: string): InputError {
  return new InputError(
    `data folder ${dataDir} ${why}: check --data-dir (or DRIVING_DATA_DIR), or create an app with 'node jobs/apps.js add --name NAME --data-dir ${dataDir}'`,
  );
}
