import { createHash } from 'node:crypto';
import { queryFile } from '../../src/db/sql.js';
import { appsOf } from '../../src/jobs/data-dir.js';
import { pointsOfVersion } from '../../src/warehouse/route-files.js';
import { openWarehouse } from '../../src/warehouse/warehouse.js';
import type { Workspace } from './workspace.js';

/**
 * Every trip's raw points as the route writer reads them (its query's rows, every copy: a row read
 * twice, a superseded one still read, shows), by trip id: the number of rows and their digest.
 * `once`: a row of the time just read is left out, as the route writer keeps one (a merge killed
 * between its rename and its sources' removal leaves both copies for a while).
 */
export async function readerView(
  ws: Workspace,
  options: { oldest?: string; once?: boolean } = {},
): Promise<Record<string, string>> {
  const oldest = options.oldest ?? '2000-01-01';
  const wh = await openWarehouse(ws.paths.warehouseFile, await appsOf(ws.dir));
  try {
    const out: Record<string, string> = {};
    for (const part of await queryFile(wh.conn, 'ops/publish/route_parts', { oldest, since: 0 })) {
      const day = String(part['trip_date']);
      const version = Number(part['version']);
      const listed = await queryFile(wh.conn, 'ops/publish/route_trips', { version, trip_date: day });
      const points = await pointsOfVersion(wh.conn, ws.paths.pointsDir, day, version, part['file_keys'] as string[]);
      const rows = points ? await queryFile(wh.conn, points.sql, points.params) : [];
      listed.forEach((t, i) => {
        const mine = rows
          .filter((r) => Number(r['k']) === i + 1)
          .map((r) => [r['t_ms'], r['lat'], r['lng'], r['speed']])
          .filter((r, j, all) => !options.once || j === 0 || r[0] !== all[j - 1]?.[0]);
        out[String(t['trip_id'])] = `${mine.length} ${createHash('sha256').update(JSON.stringify(mine)).digest('hex')}`;
      });
    }
    return out;
  } finally {
    wh.close();
  }
}
