import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppStore } from '../../src/apps/store.js';
import { Deliverer } from '../../src/webhooks/deliverer.js';
import { Outbox } from '../../src/webhooks/outbox.js';
import { deliverySettings, type DeliverySettings } from '../../src/webhooks/delivery-settings.js';
import { afterEach, beforeEach } from 'vitest';
import { workspace, type Workspace } from '../helpers/workspace.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/** A clock the test moves by hand. */
export function manualClock(start: string) {
  let now = new Date(start).getTime();
  return {
    now: () => new Date(now),
    set: (iso: string | number) => {
      now = typeof iso === 'number' ? iso : new Date(iso).getTime();
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Writes a jobs-style event file (one JSON event per line) into events/pending. */
export function writeEvents(
  ws: Workspace,
  name: string,
  events: { id: string; type?: string; appId?: string; data?: unknown }[],
  createdAt = '2026-11-21T03:00:00.000Z',
): string[] {
  mkdirSync(ws.paths.eventsDir, { recursive: true });
  const lines = events.map((e) =>
    JSON.stringify({
      id: e.id,
      type: e.type ?? 'trip.created',
      createdAt,
      appId: e.appId ?? ws.appId,
      data: e.data ?? { tripId: e.id, orgUserId: 'd-1', userId: 7 },
    }),
  );
  writeFileSync(join(ws.paths.eventsDir, name), `${lines.join('\n')}\n`);
  return lines;
}

export async function setWebhook(ws: Workspace, url: string | null, appId = ws.appId): Promise<void> {
  await new AppStore(ws.paths.appsFile).setWebhook(appId, url);
}

export async function appSecret(ws: Workspace, appId = ws.appId): Promise<string> {
  return (await new AppStore(ws.paths.appsFile).get(appId))?.appSecret as string;
}

/** Settings for tests: loopback allowed, short timeout, the interface's schedule unless given. */
export function testSettings(overrides: Partial<DeliverySettings> = {}): DeliverySettings {
  return { ...deliverySettings({}), allowLoopback: true, timeoutMs: 2_000, pollMs: 20, ...overrides };
}

export async function openDeliverer(ws: Workspace, settings: DeliverySettings, clock: () => Date = () => new Date()) {
  const outbox = await Outbox.open(ws.paths.outboxFile);
  const deliverer = new Deliverer(outbox, ws.paths, settings, clock);
  return {
    outbox,
    deliverer,
    close: async () => {
      await deliverer.close();
      await outbox.close();
    },
  };
}

/**
 * A fresh workspace (one app, zone UTC) per test, and real receivers that are closed after it.
 * Call at the top of a test file or describe block.
 */
export function useWebhookWorkspace() {
  let current: Workspace | null = null;
  const receivers: Receiver[] = [];
  beforeEach(async () => {
    current = await workspace('UTC');
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    current?.cleanup();
  });
  return {
    ws: (): Workspace => current as Workspace,
    receiver: async (...args: Parameters<typeof startReceiver>): Promise<Receiver> => {
      const r = await startReceiver(...args);
      receivers.push(r);
      return r;
    },
  };
}
