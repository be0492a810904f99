import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { StateDb } from './db.js';

/**
 * The key cursors are signed with, one for the whole service (a cursor from one process is read
 * by any other): made by the first process that starts, kept in the state store. A data folder of
 * an earlier release brings its own (`passport/cursor.key`), so cursors handed out stay valid.
 */
export async function cursorKey(db: StateDb, legacyFile: string): Promise<Buffer> {
  const legacy = existsSync(legacyFile) ? readFileSync(legacyFile, 'utf8').trim() : null;
  await db.run('meta_insert', { name: 'cursor_key', value: legacy ?? randomBytes(32).toString('hex') });
  const rows = await db.all('meta_get', { name: 'cursor_key' });
  return Buffer.from(String(rows[0]?.['value']), 'hex');
}
