import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiContext } from './context.js';
import type { Credential } from './credential.js';
import { ApiError } from './errors.js';
import { hashSecret } from '../../secrets.js';

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Authentication in two steps around the rate limit: `onRequest` resolves the credential from
 * the shared state store (the apps' key hashes, cached while the apps' version holds; the token's
 * row), so the rate limit can count by
 * it; `preParsing` refuses a request whose route needs one and has none, before a byte of its body
 * is read. Each route declares how it authenticates; an API key by default.
 */
export function authenticate(app: FastifyInstance, ctx: ApiContext): void {
  app.addHook('onRequest', async (request) => {
    request.credential = await resolve(ctx, request);
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    // an unmatched URL goes on to the 404 handler
    if (request.routeOptions.url === undefined) return payload;
    const auth = request.routeOptions.config.auth ?? 'apiKey';
    if (auth !== 'none' && request.credential?.kind !== auth) {
      throw new ApiError(
        'unauthorized',
        auth === 'apiKey'
          ? 'Authorization: expected "Bearer <apiKey>" with a valid API key'
          : 'Authorization: expected "Bearer <passport token>" with a valid token',
      );
    }
    return payload;
  });
}

async function resolve(ctx: ApiContext, request: FastifyRequest): Promise<Credential | null> {
  if (request.routeOptions.url === undefined) return null;
  const auth = request.routeOptions.config.auth ?? 'apiKey';
  if (auth === 'none') return null;
  const presented = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (!presented) return null;
  if (auth === 'apiKey') {
    const found = await ctx.apps.byApiKey(presented, ctx.now());
    if (!found) return null;
    request.tenant = found.app;
    return { kind: 'apiKey', bucket: `key:${found.keyId}` };
  }
  const owner = await ctx.passport.tokenOwner(presented, ctx.now());
  return owner ? { kind: 'passportToken', bucket: `token:${hashSecret(presented).slice(0, 32)}`, owner } : null;
}
