// The example of an operation's 400 in the OpenAPI document: one of the operation's own parameters
// refused the way the API refuses it (the message Ajv writes, prefixed by the parameter's name), so
// /docs never shows a parameter the operation does not take.

import { enumMessage } from '../http/enum-message.js';

interface ObjectSchema {
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
}

/**
 * The message of a 400 for the first parameter (query, then body, then path) that has a bound to
 * break; for a body the route checks itself (the SDK upload), the JSON parse every body goes through.
 */
export function invalidParameterMessage(schema: Record<string, unknown>, hasBody: boolean): string | undefined {
  const query = schema['querystring'] as ObjectSchema | undefined;
  for (const [name, p] of Object.entries(query?.properties ?? {})) {
    if (Array.isArray(p['enum'])) return `${name}: ${enumMessage(p['enum'])}`;
    if (typeof p['maximum'] === 'number') return `${name}: must be <= ${p['maximum']}`;
  }
  const body = schema['body'] as ObjectSchema | undefined;
  const required = body?.required?.[0];
  if (required) return `${required}: must have required property '${required}'`;
  const params = schema['params'] as ObjectSchema | undefined;
  for (const [name, p] of Object.entries(params?.properties ?? {})) {
    if (typeof p['maxLength'] === 'number') return `${name}: must NOT have more than ${p['maxLength']} characters`;
  }
  return hasBody ? 'body: not valid JSON' : undefined;
}

/** An ErrorResult example for a 400 with that message. */
export function invalidParameterExample(message: string): Record<string, unknown> {
  return { code: 40001, error: 'invalid_parameter', message, requestId: '2ddeb961-57cb-4367-8e95-454f7fcc0eac' };
}
