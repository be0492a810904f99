// The SQL lives in sql/ (CONTRIBUTING.md): tools/house.js --check (npm run lint) counts the
// statements written inline under src/ and fails above the limit, naming each. Checked on the
// repository itself, and on a small tree of its own where the limit is passed.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { INLINE_SQL_LIMIT, inlineSql, inlineStatements } from '../../tools/inline-sql.js';

const repo = resolve(import.meta.dirname, '../..');

describe('inline SQL under src/', () => {
  it('is told from prose: statements at the start of a string or template count, words in text do not', () => {
    const text = [
      "await run(conn, 'select count(*) as n from trips');",
      'await run(conn, `insert into #{quoteIdent(table)} by name\\n#{select}`);',
      'await query(conn, `',
      '  with recent as (select 1) select * from recent`);',
      "await run(conn, 'begin transaction');",
      "await run(conn, 'checkpoint slot');",
      'await run(conn, `copy (#{select}) to #{quoteLiteral(file)} (format parquet)`);',
      'await run(conn, `attach #{quoteLiteral(file)} as slot`);',
      "await run(conn, 'use slot');",
      "await run(conn, 'pragma disable_checkpoint_on_shutdown');",
      'await run(conn, `drop #{kind} if exists temp.main.x`);',
      // prose and other strings
      "describe: 'with --follow: how often the manifest is checked',",
      "summary: 'Delete a user and all their data',",
      "case 'copy':",
      "res.on('end', () => done());",
      "signal.addEventListener('abort', stop);",
      "describe: 'create an app; prints its appId',",
      "command: 'show <id>',",
      "// run(conn, 'select 1') in a comment",
    ]
      .join('\n')
      // written with #{ so that they stay plain strings here
      .replaceAll('#{', '${');
    expect(inlineStatements(text).map((s) => s.line)).toEqual([1, 2, 3, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('stays within the limit in this repository, each line that stays in src/db, src/state', () => {
    const found = inlineSql(repo);
    expect(found.length).toBeLessThanOrEqual(INLINE_SQL_LIMIT);
    // what cannot live in a file: transaction control and the statements naming a path or an alias
    for (const s of found) expect(s.file).toMatch(/^src\/(db|state)\//);
    const house = spawnSync(process.execPath, [join(repo, 'tools/house.js'), '--check'], { encoding: 'utf8' });
    expect(house.stdout).toContain(
      `inline SQL: ${found.length} statement line(s) under src/, at most ${INLINE_SQL_LIMIT}`,
    );
    expect(house.stderr).not.toContain('inline SQL');
  });

  it('fails npm run lint above the limit, naming every statement found', () => {
    const root = mkdtempSync(join(tmpdir(), 'inline-sql-'));
    try {
      mkdirSync(join(root, 'tools'));
      mkdirSync(join(root, 'src', 'jobs'), { recursive: true });
      mkdirSync(join(root, 'bench'));
      for (const f of ['house.js', 'inline-sql.js']) copyFileSync(join(repo, 'tools', f), join(root, 'tools', f));
      writeFileSync(join(root, 'package.json'), '{"type":"module"}\n');
      const lines = Array.from(
        { length: INLINE_SQL_LIMIT + 1 },
        (_, i) => `  await run(conn, 'delete from t${i} where id = $id', { id });`,
      );
      writeFileSync(join(root, 'src', 'jobs', 'sweep.ts'), `export async function sweep() {\n${lines.join('\n')}\n}\n`);
      const house = spawnSync(process.execPath, [join(root, 'tools/house.js'), '--check'], { encoding: 'utf8' });
      expect(house.status).toBe(1);
      expect(house.stderr).toContain(`more than ${INLINE_SQL_LIMIT} lines of inline SQL under src/`);
      for (let i = 0; i <= INLINE_SQL_LIMIT; i++)
        expect(house.stdout).toContain(
          `src/jobs/sweep.ts:${i + 2}: await run(conn, 'delete from t${i} where id = $id'`,
        );
      // at the limit it passes
      writeFileSync(join(root, 'src', 'jobs', 'sweep.ts'), lines.slice(1).join('\n'));
      expect(spawnSync(process.execPath, [join(root, 'tools/house.js'), '--check']).status).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
