import { resolve, join } from 'node:path';
import { setting } from './settings.js';

/** Where every file of the service lives; see README "Data layout". */
export interface Paths {
  dataDir: string;
  appsFile: string;
  landingDir: string;
  warehouseFile: string;
  pointsDir: string;
  publishedDir: string;
  /** Route files of the published trips (src/warehouse/route-files.ts), read by the API. */
  routesDir: string;
  manifestFile: string;
  passportFile: string;
  deletionsDir: string;
  eventsDir: string;
  exportsDir: string;
  outboxFile: string;
  delivererSocket: string;
}

/** `--data-dir`, else `DRIVING_DATA_DIR`, else `./data`. */
export function resolveDataDir(flag?: string): string {
  return resolve(flag ?? setting('DRIVING_DATA_DIR'));
}

export function pathsFor(dataDir: string): Paths {
  return {
    dataDir,
    appsFile: join(dataDir, 'apps.json'),
    landingDir: join(dataDir, 'landing'),
    warehouseFile: join(dataDir, 'warehouse', 'warehouse.duckdb'),
    pointsDir: join(dataDir, 'warehouse', 'points'),
    publishedDir: join(dataDir, 'published'),
    routesDir: join(dataDir, 'published', 'routes'),
    manifestFile: join(dataDir, 'published', 'manifest.json'),
    passportFile: join(dataDir, 'passport', 'passport.duckdb'),
    deletionsDir: join(dataDir, 'requests', 'deletions'),
    eventsDir: join(dataDir, 'events', 'pending'),
    exportsDir: join(dataDir, 'exports'),
    outboxFile: join(dataDir, 'webhooks', 'outbox.duckdb'),
    delivererSocket: join(dataDir, 'webhooks', 'deliverer.sock'),
  };
}
