#!/usr/bin/env node
// The operator's tool for tenants: add an app, list apps, rotate an API key, set the webhook URL.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runJob, usageFailure } from '../dist/cli.js';
import { resolveDataDir, pathsFor } from '../dist/config.js';
import { AppStore } from '../dist/apps/store.js';
import { InputError } from '../dist/errors.js';
import { appsOf } from '../dist/jobs/data-dir.js';

const COMMANDS = ['add', 'list', 'rotate-key', 'rotate-secret', 'set-webhook'];
// every command but `add` works on existing apps: a data folder without any is a mistyped --data-dir
const store = (argv, { creates = false } = {}) => {
  const dataDir = resolveDataDir(argv.dataDir);
  if (!creates) appsOf(dataDir);
  return new AppStore(pathsFor(dataDir).appsFile);
};
// --data-dir and --json are global options (set below, so an unknown command is named alone);
// a command adds only its own
const common = (y) => y;
// what `list` shows: never a key hash or the secret
const publicView = (app) => ({ appId: app.appId, name: app.name, timeZone: app.timeZone, webhookUrl: app.webhookUrl, apiKeys: app.apiKeys.length, previousSecretValidUntil: app.previousSecret?.validUntil ?? null, createdAt: app.createdAt });

await yargs(hideBin(process.argv))
  .scriptName('apps')
  .usage('$0 <command> [options]\n\nThe operator\'s tool for tenants (apps): create them, list them, rotate their keys and secrets, set their webhook URL.')
  .option('data-dir', { type: 'string', global: true, describe: 'data folder (env DRIVING_DATA_DIR, default ./data)' })
  .option('json', { type: 'boolean', default: false, global: true, describe: 'machine-readable output' })
  .command('add', 'create an app; prints its appId, API key and AppSecret once', (y) => common(y)
    .option('name', { type: 'string', demandOption: true })
    .option('time-zone', { type: 'string', default: 'UTC', describe: 'IANA zone for days, weeks, rush hour' })
    .option('webhook-url', { type: 'string' }),
  (argv) => runJob('apps add', argv.json, async () => {
    const created = await store(argv, { creates: true }).add({ name: argv.name, timeZone: argv.timeZone, webhookUrl: argv.webhookUrl });
    return { result: created, summary: `created ${created.appId}\n  apiKey:    ${created.apiKey}\n  appSecret: ${created.appSecret}\n  (shown once: store them now)` };
  }))
  .command('list', 'list apps', common, (argv) => runJob('apps list', argv.json, async () => {
    const apps = store(argv).list().map(publicView);
    return { result: { apps }, summary: `${apps.length} app(s)\n${apps.map((a) => `  ${a.appId}  ${a.name}  ${a.timeZone}  webhook=${a.webhookUrl ?? '-'}`).join('\n')}` };
  }))
  .command('rotate-key <appId>', 'issue a new API key; the previous one stays valid until the next rotation', common,
    (argv) => runJob('apps rotate-key', argv.json, async () => {
      const rotated = await store(argv).rotateKey(argv.appId);
      return { result: rotated, summary: `new apiKey for ${rotated.appId}: ${rotated.apiKey} (shown once; the previous key stays valid until the next rotation)` };
    }))
  .command('rotate-secret <appId>', 'issue a new AppSecret; the previous one keeps signing webhooks for --grace-hours', (y) => common(y)
    .option('grace-hours', { type: 'number', default: 24, describe: 'how long the previous secret still signs' }),
  (argv) => runJob('apps rotate-secret', argv.json, async () => {
    if (!(argv.graceHours >= 0 && argv.graceHours <= 720)) throw new InputError('--grace-hours must be 0 to 720');
    const rotated = await store(argv).rotateSecret(argv.appId, argv.graceHours * 3_600_000);
    return {
      result: rotated,
      summary: `new appSecret for ${rotated.appId}: ${rotated.appSecret} (shown once)\n` +
        `  until ${rotated.previousValidUntil} the Authorization header stays signed with the previous secret and webhook-signature carries both;\n` +
        '  receivers verify with both secrets meanwhile (verifyWebhook(body, header, [newSecret, oldSecret])), then drop the old one',
    };
  }))
  .command('set-webhook <appId> [url]', 'set (or, without url, clear) the webhook URL', common,
    (argv) => runJob('apps set-webhook', argv.json, async () => {
      const app = await store(argv).setWebhook(argv.appId, argv.url ?? null);
      return { result: publicView(app), summary: `${app.appId} webhook ${app.webhookUrl ?? 'cleared'}` };
    }))
  .demandCommand(1, 'a command is needed')
  .strict()
  .fail(usageFailure('apps', COMMANDS))
  .parseAsync();
