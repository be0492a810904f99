import pg from 'pg';
import { inPgTransaction } from './pg-transaction.js';

/**
 * A PostgreSQL pool handed out once its schema is made: the schema's statements run in one
 * transaction under an advisory lock, so that processes on several machines starting together do
 * not race to create the same tables. An idle connection the server drops (a restart, a failover)
 * is replaced at the next query; without the error listener it would end the process.
 */
export async function poolWithSchema(config: pg.PoolConfig, lockId: number, schemaSql: string): Promise<pg.Pool> {
  const pool = new pg.Pool(config);
  pool.on('error', () => undefined);
  const client = await pool.connect().catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  try {
    await inPgTransaction(client, () => client.query(schemaSql), lockId);
  } catch (error) {
    client.release();
    await pool.end();
    throw error;
  }
  client.release();
  return pool;
}
