import { existsSync } from 'node:fs';
import { pathsFor } from '../config.js';
import { AppStore, type App } from '../apps/store.js';
import { InputError } from '../errors.js';

/**
 * The apps of a data folder, or bad input when it holds none: a mistyped `--data-dir` would
 * otherwise create an empty warehouse, export nothing or serve 503s, all "successfully". Every job
 * but `apps add` (which creates the first app) and the demo (which creates its own) starts here.
 */
export function appsOf(dataDir: string): App[] {
  const { appsFile } = pathsFor(dataDir);
  const apps = new AppStore(appsFile).list();
  if (apps.length > 0) return apps;
  const why = !existsSync(dataDir) ? 'does not exist' : existsSync(appsFile) ? 'holds no apps (apps.json lists none)' : 'holds no apps (no apps.json)';
  throw new InputError(`data folder ${dataDir} ${why}: check --data-dir (or DRIVING_DATA_DIR), or create an app with 'node jobs/apps.js add --name NAME --data-dir ${dataDir}'`);
}
