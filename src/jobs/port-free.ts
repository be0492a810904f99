import { createServer } from 'node:net';
import { InputError } from '../errors.js';

/** The port is taken: exit 3 (busy) by the jobs' rule, as Node's own EADDRINUSE is. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
  readonly code = 'EADDRINUSE';
}

/**
 * Listens on the port and closes it again, before a job does any work, so that a port already
 * taken (a second `npm start`) is said at once with what to do, not after minutes of loading and
 * publishing as a raw EADDRINUSE. The job's own listen later still handles the rare port taken in
 * between. Port 0 (any free port) is never taken. `otherPort` is how to ask for another port, as
 * the user started the job (`npm start -- --port 8081` under npm, which keeps a `--port` before `--`).
 *
 * @example await assertPortFree(8080, '127.0.0.1', 'another npm start or serve.js?');
 */
export async function assertPortFree(
  port: number,
  host: string,
  whoElse: string,
  otherPort = 'pass --port N',
): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port, host, exclusive: true }, resolve);
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new PortInUseError(`port ${port} on ${host} is in use (${whoElse}); stop it or ${otherPort}`);
    if (code === 'EACCES')
      throw new InputError(
        `port ${port} on ${host} needs privileges this process does not have; ${otherPort} (1024 or above)`,
      );
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw new InputError(`--host ${host} is not an address of this machine`);
    throw error;
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}
