import type { FastifyReply, FastifyRequest } from 'fastify';

/** The header that names a request's cell to the balancer's internal front door (deploy/haproxy-cells.cfg). */
export const CELL_HEADER = 'x-driving-cell';

/** Headers of the answer passed back as they came. */
const PASSED_BACK = ['content-type', 'retry-after', 'cache-control', 'content-disposition'];

/** Whether a request may be sent on: it did not come from the balancer's cell front door already (no loop). */
export const mayForward = (request: FastifyRequest): boolean => request.headers[CELL_HEADER] === undefined;

/**
 * Sends a read for a driver of a cell this machine does not serve to the balancer's internal front
 * door, naming the cell, and answers with what a machine of that cell answered (docs/operating.md,
 * Cells). The header only routes: the machine that answers looks the driver's cell up itself, and
 * one that does not serve it either answers 503 `cell_not_served` rather than sending it on again.
 */
export async function forwardToCell(
  request: FastifyRequest,
  reply: FastifyReply,
  router: string,
  cell: string,
): Promise<FastifyReply> {
  const headers: Record<string, string> = { [CELL_HEADER]: cell, 'x-request-id': String(request.id) };
  for (const name of ['authorization', 'accept', 'user-agent']) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const answer = await fetch(new URL(request.url, router), {
    method: request.method,
    headers,
    signal: AbortSignal.timeout(30_000),
  });
  reply.status(answer.status);
  for (const name of PASSED_BACK) {
    const value = answer.headers.get(name);
    if (value !== null) reply.header(name, value);
  }
  return reply.send(Buffer.from(await answer.arrayBuffer()));
}
