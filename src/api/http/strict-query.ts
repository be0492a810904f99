import type { FastifyInstance } from 'fastify';
import { invalid } from './errors.js';

const PLAIN_INTEGER = /^-?\d{1,15}$/;
/** A number parameter (`tolerance`) also takes decimals: `2.5`, not `2.`, `.5`, `2.5e0`. */
const PLAIN_DECIMAL = /^-?\d{1,15}(\.\d{1,15})?$/;

interface QuerySchema {
  properties?: Record<string, { type?: string }>;
}

/**
 * Numeric query parameters as plain decimals only: integers as digits, numbers as digits with an
 * optional fraction. The schema validator would coerce `0x10`, `1e2`, `+5` and ` 5 ` to numbers;
 * they are refused here first, naming the parameter, and the schema then checks the range. A
 * parameter given twice is refused too.
 */
export function strictNumbers(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const properties = (request.routeOptions.schema?.querystring as QuerySchema | undefined)?.properties;
    if (!properties) return;
    const query = request.query as Record<string, unknown>;
    for (const [name, value] of Object.entries(query)) {
      if (Array.isArray(value)) throw invalid(name, 'given more than once');
      const type = properties[name]?.type;
      if (typeof value !== 'string') continue;
      if (type === 'integer' && !PLAIN_INTEGER.test(value))
        throw invalid(name, `'${value.slice(0, 40)}' is not a plain decimal integer`);
      if (type === 'number' && !PLAIN_DECIMAL.test(value))
        throw invalid(name, `'${value.slice(0, 40)}' is not a plain decimal number`);
    }
  });
}
