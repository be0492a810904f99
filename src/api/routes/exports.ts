import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { Readable } from 'node:stream';
import type { ApiContext } from '../http/context.js';
import { ApiError, invalid } from '../http/errors.js';
import { parseQueryTime } from '../http/query-time.js';
import { errorResponses } from '../openapi/schemas.js';
import { holdSnapshot } from '../export/hold-snapshot.js';
import type { Snapshot } from '../read/snapshot.js';
import { tripBatches, type ExportBatch } from '../export/trip-batches.js';
import { ndjsonLines } from '../export/ndjson.js';
import { setting } from '../../settings.js';
import { memoryLogOn, withMemoryLog } from '../export/memory-log.js';
import { exportStats } from '../export/export-stats.js';
import { leftOutPerCell } from '../read/moving.js';

declare module 'fastify' {
  interface FastifySchema {
    /** OpenAPI: the media types a streamed answer comes in (its body has no JSON schema). */
    produces?: string[];
  }
}

const ARROW = 'application/vnd.apache.arrow.stream';
const NDJSON = 'application/x-ndjson';
const FAR_PAST = new Date('1970-01-01T00:00:00Z');
const FAR_FUTURE = new Date('9999-12-31T23:59:59Z');
/**
 * Trips per batch: one Arrow record batch each. The API's peak memory follows the batch's size,
 * not the range; batches of 250 peaked no lower than 1,000 (docs/benchmarks.md, export).
 */
const batchTrips = (): number => setting('DRIVING_API_EXPORT_BATCH_TRIPS');
/** A whole export reads every trip of the app: it weighs as many ordinary reads under the fair share. */
const EXPORT_COST = 100;

/**
 * Which format the Accept header asks for, by its q-values (q=0: not acceptable): the format with
 * the highest q, where a format named outright counts over a wildcard (`*\/*`, `application/*`)
 * that would also match it. At equal q Arrow when it is named outright, else NDJSON (also for no
 * Accept).
 * @example formatOf('application/vnd.apache.arrow.stream;q=0, application/x-ndjson') // NDJSON
 */
export function formatOf(accept: string | undefined): typeof ARROW | typeof NDJSON {
  const ranges = (accept ?? '*/*')
    .split(',')
    .filter((r) => r.trim() !== '')
    .map((range) => {
      const [type = '', ...params] = range.split(';').map((p) => p.trim());
      const q = params.map((p) => /^q\s*=\s*(.*)$/i.exec(p)?.[1]).find((v) => v !== undefined);
      if (q !== undefined && !/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(q))
        throw invalid('Accept', `q must be a number from 0 to 1, got '${q}'`);
      return { type: type.toLowerCase(), q: q === undefined ? 1 : Number(q) };
    });
  // the q of the most specific range that matches the type; -1 when none does
  const weigh = (type: string): { q: number; named: boolean } => {
    const named = ranges.filter((r) => r.type === type);
    if (named.length > 0) return { q: Math.max(...named.map((r) => r.q)), named: true };
    const wild = ranges.filter((r) => r.type === 'application/*');
    const any = ranges.filter((r) => r.type === '*/*');
    const matched = wild.length > 0 ? wild : any;
    return { q: matched.length > 0 ? Math.max(...matched.map((r) => r.q)) : -1, named: false };
  };
  const arrow = weigh(ARROW);
  const ndjson = weigh(NDJSON);
  if (arrow.q > 0 && (arrow.q > ndjson.q || (arrow.q === ndjson.q && arrow.named))) return ARROW;
  if (ndjson.q > 0) return NDJSON;
  throw invalid('Accept', `must be ${ARROW} or ${NDJSON} (a q of 0 refuses a type)`);
}

async function* ndjson(batches: AsyncIterable<ExportBatch>): AsyncGenerator<string> {
  for await (const batch of batches) yield* ndjsonLines(batch);
}

/** The export's query: the range of trip starts. */
const ExportQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    startTime: {
      type: 'string',
      maxLength: 40,
      description:
        "Earliest trip start: YYYY-MM-DD, 'YYYY-MM-DD HH:MM:SS' in the app's zone, or ISO 8601 with an offset; default: the first trip",
    },
    endTime: {
      type: 'string',
      maxLength: 40,
      description: 'Latest trip start, inclusive (a date means its whole day); the same forms; default: the last trip',
    },
  },
} as const;

/** The bulk export: every trip of the app in a time range, streamed in batches. */
export function exportRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Querystring: FromSchema<typeof ExportQuery> }>(
    '/v1/exports/trips',
    {
      config: { cost: EXPORT_COST },
      schema: {
        operationId: 'exportTrips',
        tags: ['Exports'],
        summary: 'Every trip of the app, streamed (Arrow or NDJSON)',
        description:
          `All of the app's trips that start in [startTime, endTime], oldest first, with the fields of the trip list and the trip detail, the user (orgUserId, userId) and the events. ` +
          `\`Accept: ${ARROW}\` gives an Arrow IPC stream (one record batch per 1,000 trips, DRIVING_API_EXPORT_BATCH_TRIPS; events a list of structs, points structs {lng, lat}); \`Accept: ${NDJSON}\` (the default) one JSON object per line, as the trip detail serves it. Accept's q-values are honoured (q=0 refuses a type; the highest q wins). ` +
          'The export reads one publish from start to end; deleted users are never included. It weighs as a costly request under the fair share between apps.',
        querystring: ExportQuery,
        produces: [ARROW, NDJSON],
        response: { ...errorResponses },
      },
    },
    async (request, reply) => {
      const format = formatOf(request.headers.accept);
      const zone = request.tenant.timeZone;
      const from = request.query.startTime
        ? parseQueryTime('startTime', request.query.startTime, zone, 'start')
        : FAR_PAST;
      const to = request.query.endTime ? parseQueryTime('endTime', request.query.endTime, zone, 'end') : FAR_FUTURE;
      if (to <= from) throw invalid('endTime', 'must not be before startTime');
      const excludedUsers = await ctx.passport.deletedUserIds(request.tenant.appId);
      // apache-arrow is loaded at the first Arrow export, not at every API start (loading it costs
      // CPU that most processes, never asked for Arrow, would spend for nothing)
      const arrow = format === ARROW ? await import('../export/arrow.js') : null;
      // with cells, every cell's snapshot, each held until the answer ends: the app's trips of every
      // cell, a cell at a time (docs/decisions.md, Cells)
      const sources = ctx.cells ? [...ctx.cells.byName.entries()].sort(([a], [b]) => (a < b ? -1 : 1)) : [];
      const followers = ctx.cells ? sources.map(([, c]) => c.snapshots) : [ctx.snapshots];
      const held: Array<{ snapshot: Snapshot; release: () => void }> = [];
      const releaseAll = () => {
        for (const h of held.splice(0)) h.release();
      };
      for (const follower of followers) {
        const one = await holdSnapshot(follower).catch((error: unknown) => {
          releaseAll();
          throw error;
        });
        if (!one) {
          releaseAll();
          throw new ApiError('not_ready', 'no data has been published yet');
        }
        held.push(one);
      }
      exportStats.holding++;
      const query = { appId: request.tenant.appId, zone, from, to, excludedUsers, batchSize: batchTrips() };
      // a driver moving between two cells held here is streamed from one of them (src/api/read/moving.ts)
      const leftOut = ctx.cells
        ? leftOutPerCell(
            await ctx.passport.movingDrivers(request.tenant.appId),
            new Map(sources.map(([name], i) => [name, held[i]?.snapshot.manifest.version ?? 0])),
          )
        : new Map<string, number[]>();
      const trips = eachInTurn(
        held.map((h, i) => {
          const reader = h.snapshot.exportReader;
          const moving = leftOut.get(sources[i]?.[0] ?? '') ?? [];
          const batches = tripBatches(
            reader,
            moving.length > 0 ? { ...query, excludedUsers: [...excludedUsers, ...moving] } : query,
          );
          return memoryLogOn() ? withMemoryLog(batches, { snapshot: h.snapshot, export: reader }, request.id) : batches;
        }),
      );
      const body = Readable.from(arrow ? arrow.arrowStream(trips) : ndjson(trips), { objectMode: false });
      // released when the answer ends, fails, or the client goes away
      body.once('close', () => {
        exportStats.holding--;
        releaseAll();
      });
      return reply.type(format).header('Cache-Control', 'no-store').send(body);
    },
  );
}

/** The batches of each source in turn. */
async function* eachInTurn<T>(sources: AsyncGenerator<T>[]): AsyncGenerator<T> {
  for (const source of sources) yield* source;
}
