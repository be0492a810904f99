import cluster, { type Worker } from 'node:cluster';

/** How long a stopping worker may take to finish the requests it holds (docs/decisions.md, Storage and processes). */
export const DRAIN_MS = 10_000;

export interface PrimaryOptions {
  workers: number;
  log(line: string): void;
  /** How long a drained worker may take before it is killed. */
  drainMs?: number;
  /** Called once the workers are gone, before the primary exits (its own work: an API machine's follower). */
  onStop?: () => Promise<void> | undefined;
}

/**
 * The primary of `serve.js --workers N` (Node's cluster: the workers share one listening port,
 * the primary hands them connections round-robin). It serves nothing itself: it keeps N workers,
 * replaces one that dies at once, drains all on SIGTERM/SIGINT (exit 0 once they are gone), and on
 * SIGHUP replaces them one at a time, each new one listening before the old one drains, so a
 * rolling restart fails no request. (Room for a metrics listener that aggregates the workers'
 * registries belongs here, beside the workers, not in them.)
 */
export function runPrimary(options: PrimaryOptions): void {
  const drainMs = options.drainMs ?? DRAIN_MS;
  let stopping = false;
  let restarting = false;
  /** Workers asked to go: their exit is expected, not a death to replace. */
  const leaving = new WeakSet<Worker>();

  const fork = (): Promise<{ worker: Worker; address: string }> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork();
      const onExit = (code: number | null) =>
        reject(new Error(`worker ${worker.process.pid} exited ${code} before listening`));
      worker.once('exit', onExit);
      worker.once('listening', (where) => {
        worker.off('exit', onExit);
        const host = where.address?.includes(':') ? `[${where.address}]` : (where.address ?? '127.0.0.1');
        resolve({ worker, address: `http://${host}:${where.port}` });
      });
    });

  const retire = (worker: Worker): Promise<void> =>
    new Promise((resolve) => {
      if (worker.isDead()) return resolve();
      leaving.add(worker);
      const kill = setTimeout(() => worker.process.kill('SIGKILL'), drainMs + 2_000);
      worker.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      worker.process.kill('SIGTERM');
    });

  // a stopping worker's question (settleHandoffs): answered in the order the worker's messages came
  cluster.on('message', (worker, message: unknown) => {
    if ((message as { dds?: string } | null)?.dds === CLOSED && worker.isConnected())
      worker.send({ dds: CLOSED_NOTED });
  });

  let started = false;
  cluster.on('exit', (worker, code, signal) => {
    if (stopping || leaving.has(worker)) return;
    if (!started) {
      // a worker that cannot start (bad data folder, port taken) would only die again: the primary ends with its code
      stopping = true;
      options.log(`serve: a worker could not start (${signal ?? `exit ${code}`})`);
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      process.exitCode = code ?? 1;
      return;
    }
    options.log(`serve: worker ${worker.process.pid} died (${signal ?? `exit ${code}`}); starting another`);
    fork().catch((error: Error) => options.log(`serve: ${error.message}`));
  });

  const workers = (): Worker[] =>
    Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !leaving.has(w));

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    options.log(`serve: ${signal}: draining ${workers().length} worker(s)`);
    void Promise.all(Object.values(cluster.workers ?? {}).map((w) => (w ? retire(w) : undefined)))
      .then(() => options.onStop?.())
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  process.on('SIGHUP', () => {
    if (stopping || restarting) return;
    restarting = true;
    void (async () => {
      const old = workers();
      options.log(`serve: SIGHUP: replacing ${old.length} worker(s) one at a time`);
      for (const worker of old) {
        if (stopping) break;
        await fork();
        await retire(worker);
      }
      options.log('serve: rolling restart done');
    })()
      .catch((error: Error) => options.log(`serve: rolling restart failed: ${error.message}`))
      .finally(() => (restarting = false));
  });

  void Promise.all(Array.from({ length: options.workers }, () => fork())).then(
    (forked) => {
      started = true;
      options.log(`serve: listening on ${forked[0]?.address} (${options.workers} workers)`);
    },
    () => undefined,
  );
}

/*
 * A worker's last connections. The primary accepts every connection and hands it to a worker over
 * IPC ("newconn"); it keeps the socket until the worker answers whether it took it, and passes a
 * refused one to another worker. A worker that exits with a hand-off still unanswered (sent just
 * before the primary learnt that the worker's server closed) leaves that client on a socket no one
 * will ever answer or close: Node's cluster forgets the hand-offs of a worker that is gone. Measured
 * here: 2 clients of 30,652 hung that way over 30 rolling restarts. So a stopping worker, once its
 * server is closed, asks the primary and waits for its answer: IPC keeps order both ways, so every
 * hand-off sent before the primary took note of the close reaches the worker (which refuses it, and
 * the primary gives it to another) before the answer does. Before exiting, the worker waits until
 * what it sent the primary (those refusals among it) has been written.
 */
const CLOSED = 'dds:server-closed';
const CLOSED_NOTED = 'dds:server-closed-noted';
const LEAVING = 'dds:leaving';

/** How long a worker waits for the primary's answer: one that does not come (a primary stopped with -9) does not hold the stop. */
const NOTE_WAIT_MS = 2_000;

/** In a cluster worker whose server has just closed: resolves once no hand-off of a connection to it can be under way. Elsewhere at once. */
export function settleHandoffs(): Promise<void> {
  if (!cluster.isWorker || !process.connected || !process.send) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
      process.off('disconnect', done);
      resolve();
    };
    const onMessage = (message: unknown) => {
      if ((message as { dds?: string } | null)?.dds === CLOSED_NOTED) done();
    };
    const timer = setTimeout(done, NOTE_WAIT_MS);
    process.on('message', onMessage);
    process.once('disconnect', done);
    process.send!({ dds: CLOSED }, undefined, undefined, (error) => (error ? done() : undefined));
  });
}

/** In a cluster worker: resolves once everything it sent the primary has been written (or the channel is gone). Elsewhere at once. */
export function flushToPrimary(): Promise<void> {
  if (!cluster.isWorker || !process.connected || !process.send) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, NOTE_WAIT_MS);
    process.send!({ dds: LEAVING }, undefined, undefined, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Whether this process is the primary of a cluster with more than one worker to run. */
export const isPrimary = (): boolean => cluster.isPrimary;
