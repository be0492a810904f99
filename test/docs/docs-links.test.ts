import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize } from 'node:path';

// A newcomer follows the README's links: every relative link in the README and docs/ leads to a
// file that exists and, when it names a heading, to a heading that exists (GitHub's anchors).
const files = [
  'README.md',
  'test/README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string): Set<string> => {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1] as string)));
};

describe('documentation links', () => {
  it.each(files)('%s links only to files and headings that exist', (file) => {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(target as string)) continue;
      const [path, anchor] = (target as string).split('#') as [string, string | undefined];
      const resolved = path === '' ? file : normalize(join(dirname(file), path));
      // a reader of the repository has only the repository: nothing outside it can be linked
      if (resolved.startsWith('..') || isAbsolute(resolved)) {
        broken.push(`${target}: outside the repository`);
        continue;
      }
      if (!existsSync(resolved)) {
        broken.push(`${target}: no file ${resolved}`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
        broken.push(`${target}: no heading #${anchor} in ${resolved}`);
    }
    expect(broken).toEqual([]);
  });

  // A reader sees the repository only: no numbered section of a document it does not hold
  // ("decisions 7", "operation 5", "section 11"), no path to one outside it.
  it.each(files)('%s names things by what they do, not by numbers of documents outside the repository', (file) => {
    const text = readFileSync(file, 'utf8');
    expect(text.match(/\b(decisions?|operations?|section) \d+\b/gi) ?? []).toEqual([]);
    expect(text.match(/\.\.\/shared\/|shared\/spec\//g) ?? []).toEqual([]);
  });
});
