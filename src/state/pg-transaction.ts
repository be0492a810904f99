import type pg from 'pg';

/**
 * Runs `fn` in one PostgreSQL transaction on `client`: all it writes lands or none of it. With a
 * `lockId`, the transaction first takes that advisory lock, so processes on several machines doing
 * the same work run one after another. Transaction control is the connection's, not a query of
 * sql/: this is the one place it is written for PostgreSQL.
 */
export async function inPgTransaction<T>(client: pg.PoolClient, fn: () => Promise<T>, lockId?: number): Promise<T> {
  await client.query('begin');
  try {
    if (lockId !== undefined) await client.query('select pg_advisory_xact_lock($1)', [lockId]);
    const result = await fn();
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}
