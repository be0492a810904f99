import { describe, expect, it } from 'vitest';
import { loadOrder } from '../../src/backup/restore.js';

describe('the order a restore loads the archive again', () => {
  it('is by day folder, then a name before its later namesakes (by their time), then by name; other files left out', () => {
    const paths = [
      'landing/loaded/2026-11-21/b.ndjson',
      'landing/loaded/2026-11-20/1795000000000-a.ndjson',
      'landing/loaded/2026-11-20/b.ndjson',
      'landing/loaded/2026-11-20/a.ndjson',
      'landing/loaded/2026-11-20/1794000000000-a.ndjson',
      'landing/loaded/2026-11-20/a.ndjson.reason.txt',
      'landing/waiting.ndjson',
      'events/pending/v1.ndjson',
    ];
    expect(loadOrder(paths)).toEqual([
      'landing/loaded/2026-11-20/a.ndjson',
      'landing/loaded/2026-11-20/b.ndjson',
      'landing/loaded/2026-11-20/1794000000000-a.ndjson',
      'landing/loaded/2026-11-20/1795000000000-a.ndjson',
      'landing/loaded/2026-11-21/b.ndjson',
    ]);
  });
});
