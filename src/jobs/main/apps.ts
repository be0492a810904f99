// `node jobs/apps.js`: the operator's tool for tenants: add an app, list apps, rotate or revoke API
// keys, rotate the AppSecret, set the webhook URL.
import type { Arguments } from 'yargs';
import { runJob } from '../cli.js';
import { jobArgs, type JobCommand } from '../args.js';
import { resolveDataDir, pathsFor } from '../../data-folder.js';
import { parseDuration } from '../../apps/duration.js';
import { InputError } from '../../errors.js';
import { deliverySettings } from '../../webhooks/delivery-settings.js';
import { EVENT_TYPES } from '../../webhooks/intake.js';
import { previousSecretsUntil } from '../../apps/previous-secrets.js';
import type { App, AppStore, ApiKeyEntry, KeySelector } from '../../apps/store.js';

interface AppsArgs {
  dataDir?: string;
  json: boolean;
  appId: string;
  name: string;
  timeZone: string;
  webhookUrl?: string;
  url?: string;
  expirePrevious?: string | number;
  previous?: boolean;
  keyId?: string;
  key?: string;
  graceHours: number;
  eventTypes?: string;
}

// The state store (and with it DuckDB) is imported when a command runs, once yargs has parsed it:
// --help and a refused flag cost a Node start only.
const work = async () => {
  const [{ AppStore, keyIdOf }, { appsOf }, { explainedRefusal }] = await Promise.all([
    import('../../apps/store.js'),
    import('../data-dir.js'),
    import('../../webhooks/endpoint-check.js'),
  ]);
  return { AppStore, keyIdOf, appsOf, explainedRefusal };
};

// the same check as the webhook API's: https, public addresses only (DRIVING_WEBHOOK_ALLOW_LOOPBACK
// lets http and loopback through, for local testing)
const checkedUrl = async (url: string | undefined): Promise<string | undefined> => {
  if (!url) return url;
  const { explainedRefusal } = await work();
  const refusal = await explainedRefusal(url, { allowLoopback: deliverySettings().allowLoopback });
  if (refusal) throw new InputError(`--webhook-url refused: ${refusal.replace(/^url: /, '')}`);
  return url;
};

// every command but `add` works on existing apps: a data folder without any is a mistyped --data-dir
const store = async (argv: AppsArgs, { creates = false } = {}): Promise<AppStore> => {
  const { AppStore, appsOf } = await work();
  const dataDir = resolveDataDir(argv.dataDir);
  if (!creates) await appsOf(dataDir);
  return new AppStore(pathsFor(dataDir).appsFile);
};

type KeyIdOf = (key: ApiKeyEntry) => string;

// what `list` shows: never a key hash or the secret
const publicView = (app: App, keyIdOf: KeyIdOf) => ({
  appId: app.appId,
  name: app.name,
  timeZone: app.timeZone,
  webhookUrl: app.webhookUrl,
  webhookEventTypes: app.webhookEventTypes ?? [],
  webhookDisabled: app.webhookDisabled ?? null,
  apiKeys: app.apiKeys.length,
  keys: app.apiKeys.map((k) => ({ keyId: keyIdOf(k), createdAt: k.createdAt, validUntil: k.validUntil ?? null })),
  previousSecretValidUntil: previousSecretsUntil(app),
  createdAt: app.createdAt,
});
const keysLine = (app: App, keyIdOf: KeyIdOf): string =>
  app.apiKeys.map((k) => `${keyIdOf(k)}${k.validUntil ? ` (until ${k.validUntil})` : ''}`).join(', ');

/** A command's handler: runJob under `apps <name>` with the parsed flags. */
const handler =
  <T>(name: string, job: (argv: AppsArgs) => Promise<{ result: T; summary: string }>) =>
  (parsed: Arguments): Promise<void> => {
    const argv = parsed as unknown as AppsArgs;
    return runJob(`apps ${name}`, argv.json, () => job(argv));
  };

const commands: JobCommand[] = [
  {
    command: 'add',
    describe: 'create an app; prints its appId, API key and AppSecret once',
    builder: (y) =>
      y
        .option('name', { type: 'string', demandOption: true, describe: "the app's name" })
        .option('time-zone', { type: 'string', default: 'UTC', describe: 'IANA zone for days, weeks, rush hour' })
        .option('webhook-url', { type: 'string', describe: 'where its webhook events go (https)' }),
    handler: handler('add', async (argv) => {
      const created = await (await store(argv, { creates: true })).add({
        name: argv.name,
        timeZone: argv.timeZone,
        webhookUrl: await checkedUrl(argv.webhookUrl),
      });
      return {
        result: created,
        summary: `created ${created.appId}\n  apiKey:    ${created.apiKey}\n  appSecret: ${created.appSecret}\n  (shown once: store them now)`,
      };
    }),
  },
  {
    command: 'list',
    describe: 'list apps',
    handler: handler('list', async (argv) => {
      const all = await (await store(argv)).list();
      const { keyIdOf } = await work();
      const apps = all.map((a) => publicView(a, keyIdOf));
      return {
        result: { apps },
        summary: `${apps.length} app(s)\n${all.map((a) => `  ${a.appId}  ${a.name}  ${a.timeZone}  webhook=${a.webhookUrl ?? '-'}  keys=${keysLine(a, keyIdOf) || '-'}`).join('\n')}`,
      };
    }),
  },
  {
    command: 'rotate-key <appId>',
    describe: 'issue a new API key; the previous one stays valid until the next rotation, or for --expire-previous',
    builder: (y) =>
      y.option('expire-previous', {
        type: 'string',
        describe:
          'the previous key ends after this long: 0 (now), 10m, 24h, 7d (at most 30d); default: at the next rotation',
      }),
    handler: handler('rotate-key', async (argv) => {
      const expirePreviousMs =
        argv.expirePrevious === undefined ? undefined : parseDuration('--expire-previous', String(argv.expirePrevious));
      const rotated = await (await store(argv)).rotateKey(argv.appId, { expirePreviousMs });
      const previous = rotated.previousValidUntil
        ? `the previous key stays valid until ${rotated.previousValidUntil}`
        : 'the previous key stays valid until the next rotation';
      return {
        result: rotated,
        summary: `new apiKey for ${rotated.appId} (keyId ${rotated.keyId}): ${rotated.apiKey} (shown once; ${previous})`,
      };
    }),
  },
  {
    command: 'revoke-key <appId>',
    describe:
      'end API keys now (a leaked key): every key by default, or --previous, --key-id, --key; a new key is issued when the current one ends',
    builder: (y) =>
      y
        .option('previous', { type: 'boolean', describe: 'end every key but the current one' })
        .option('key-id', { type: 'string', describe: 'end the key with this keyId (as `list` shows it)' })
        .option('key', { type: 'string', describe: 'end this key (the leaked value itself; it is only hashed)' })
        .conflicts('previous', ['key-id', 'key'])
        .conflicts('key-id', 'key'),
    handler: handler('revoke-key', async (argv) => {
      const which: KeySelector = argv.previous
        ? { previous: true }
        : argv.keyId
          ? { keyId: argv.keyId }
          : argv.key
            ? { apiKey: argv.key }
            : { all: true };
      const revoked = await (await store(argv)).revokeKeys(argv.appId, which);
      const ended =
        revoked.revoked.length > 0
          ? `ended ${revoked.revoked.join(', ')} for ${revoked.appId}`
          : `no key ended for ${revoked.appId}`;
      const issued = revoked.apiKey
        ? `\n  new apiKey (keyId ${revoked.keyId}): ${revoked.apiKey} (shown once: hand it to the integrator as at add)`
        : '';
      return { result: revoked, summary: `${ended}; the API refuses them from its next request${issued}` };
    }),
  },
  {
    command: 'rotate-secret <appId>',
    describe: 'issue a new AppSecret; the previous one keeps signing webhooks for --grace-hours',
    builder: (y) =>
      y.option('grace-hours', {
        type: 'number',
        default: 24,
        describe: 'how long the previous secret still signs (0 to 720)',
      }),
    handler: handler('rotate-secret', async (argv) => {
      if (!(argv.graceHours >= 0 && argv.graceHours <= 720)) throw new InputError('--grace-hours must be 0 to 720');
      const rotated = await (await store(argv)).rotateSecret(argv.appId, argv.graceHours * 3_600_000);
      return {
        result: rotated,
        summary:
          `new appSecret for ${rotated.appId}: ${rotated.appSecret} (shown once)\n` +
          `  until ${rotated.previousValidUntil} the Authorization header stays signed with the previous secret and webhook-signature carries both;\n` +
          '  receivers verify with both secrets meanwhile (verifyWebhook(body, header, [newSecret, oldSecret])), then drop the old one',
      };
    }),
  },
  {
    command: 'set-webhook <appId> [url]',
    describe: 'set (or, without url, clear) the webhook URL; setting it enables a disabled endpoint',
    builder: (y) =>
      y.option('event-types', {
        type: 'string',
        describe: 'comma-separated event types to send (default: every type)',
      }),
    handler: handler('set-webhook', async (argv) => {
      const eventTypes = argv.eventTypes
        ? String(argv.eventTypes)
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean)
        : [];
      const known: readonly string[] = EVENT_TYPES;
      const unknown = eventTypes.filter((t) => !known.includes(t));
      if (unknown.length > 0)
        throw new InputError(`--event-types: unknown type(s) ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}`);
      const app = await (await store(argv)).setWebhook(argv.appId, (await checkedUrl(argv.url)) ?? null, eventTypes);
      return {
        result: publicView(app, (await work()).keyIdOf),
        summary: `${app.appId} webhook ${app.webhookUrl ?? 'cleared'}${eventTypes.length ? ` (${eventTypes.join(', ')})` : ''}`,
      };
    }),
  },
];

/** Parses apps.js's command and flags and runs the command. */
export async function main(): Promise<void> {
  await jobArgs(
    'apps',
    "$0 <command> [options]\n\nThe operator's tool for tenants (apps): create them, list them, rotate or revoke their keys, rotate their secrets, set their webhook URL.",
    { commands, stateStore: true },
  ).parseAsync();
}
