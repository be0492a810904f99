import { invalid } from './errors.js';

/**
 * How deep arrays and objects nest in JSON text, counted without parsing, stopping as soon as
 * `max` is passed: a body nested thousands deep is refused before anything recurses over it.
 * @example jsonDepthAbove('[[1]]', 1) // true
 */
export function jsonDepthAbove(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character, a quote included
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * A JSON body: empty is no body (the token issue and DELETE take none, but clients send the header),
 * too deep or not JSON is a 400 naming the body.
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text === '') return undefined;
  if (jsonDepthAbove(text, maxDepth)) throw invalid('body', `JSON nested deeper than ${maxDepth} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('body', 'not valid JSON');
  }
}
