// Erasure reaches the bytes in the deliverer's outbox (docs/decisions.md, "Deletion"): the intake that takes in a
// user's user.deleted event drops every other event of that user, delivered or not, and the
// outbox file is rewritten so that none of their bytes remain; the other users' events and the
// user.deleted event stay.
import { beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import type { Workspace } from '../helpers/workspace.js';
import { openDeliverer, testSettings, useWebhookWorkspace, writeEvents } from './setup.js';

const fixture = useWebhookWorkspace();
let ws: Workspace;
beforeEach(() => {
  ws = fixture.ws();
});

/** Whether the outbox's files (the database and its log) hold `text`. */
const outboxHolds = (text: string): boolean =>
  [ws.paths.outboxFile, `${ws.paths.outboxFile}.wal`]
    .filter(existsSync)
    .some((f) => readFileSync(f).includes(Buffer.from(text)));

describe('the outbox after a user.deleted', () => {
  it("drops the user's other events and rewrites its file without their bytes; the rest stays and is served", async () => {
    writeEvents(ws, 'v000000000001.ndjson', [
      { id: 'evt_gone_trip', data: { tripId: 'trip-gone-x91q', orgUserId: 'org-gone-x91q', userId: 7 } },
      {
        id: 'evt_gone_score',
        type: 'safety_score.updated',
        data: { orgUserId: 'org-gone-x91q', userId: 7, safetyScore: 80 },
      },
      { id: 'evt_stay_trip', data: { tripId: 'trip-stay-p3', orgUserId: 'org-stay', userId: 8 } },
    ]);
    let d = await openDeliverer(ws, testSettings());
    try {
      await d.deliverer.step({ intake: 'always' });
      await d.outbox.rows('checkpoint');
      // the scan sees the events while they are there
      expect(outboxHolds('trip-gone-x91q')).toBe(true);
      writeEvents(ws, 'v000000000002.ndjson', [
        {
          id: 'evt_gone_deleted',
          type: 'user.deleted',
          data: { orgUserId: 'org-gone-x91q', userId: 7, deletedAt: '2026-11-21T04:00:00.000Z' },
        },
      ]);
      await d.deliverer.step({ intake: 'always' });
      expect(d.outbox.droppedForDeletedUsers).toBe(2);
      const rows = await d.outbox.rows('select event_id, event_type from events order by seq');
      expect(rows.map((r) => r['event_id'])).toEqual(['evt_stay_trip', 'evt_gone_deleted']);
      expect(
        await d.outbox.rows("select * from queue where event_id like 'evt_gone_t%' or event_id like 'evt_gone_s%'"),
      ).toEqual([]);
    } finally {
      await d.close();
    }
    expect(outboxHolds('trip-gone-x91q')).toBe(false);
    expect(outboxHolds('evt_gone_score')).toBe(false);
    expect(outboxHolds('trip-stay-p3')).toBe(true);
    // the rewritten file is a whole outbox: opened again, it holds what stayed
    d = await openDeliverer(ws, testSettings());
    try {
      expect((await d.outbox.rows('select event_id from events order by seq')).map((r) => r['event_id'])).toEqual([
        'evt_stay_trip',
        'evt_gone_deleted',
      ]);
    } finally {
      await d.close();
    }
  });
});
