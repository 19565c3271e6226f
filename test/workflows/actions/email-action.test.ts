/**
 * The `email` workflow action (contract §6) through the service's real `Mailer` to real SMTP
 * servers on 127.0.0.1: the SMTP sink, and small servers that refuse recipients or logins.
 * One message per attempt to all recipients; the outcome is the server's reply or its refusal,
 * never the credentials of SMTP_URL; values cannot add headers through the subject.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { getGlobalDispatcher } from 'undici';
import { parseDatabaseUrl } from '../../../src/config.ts';
import { type DatabaseHandle, openDatabase } from '../../../src/db/database.ts';
import { migrateToLatest } from '../../../src/db/migrate.ts';
import { MAIL_FROM, Mailer, SMTP_NOT_CONFIGURED } from '../../../src/mail/mailer.ts';
import { systemClock } from '../../../src/shared/clock.ts';
import type { ActionConfigs } from '../../../src/workflows/action-configs.schemas.ts';
import type { ActionRuntime, MailSender } from '../../../src/workflows/actions/action.ts';
import { defaultEmailBody, emailAction, emailSubject } from '../../../src/workflows/actions/email.ts';
import type { TemplateContext } from '../../../src/workflows/templates.ts';
import { createTestDatabase, IS_POSTGRES, type TestDatabase } from '../../helpers/database.ts';
import { uniqueEmail } from '../../helpers/identity.ts';
import { parseMessage, type SinkMessage, type SmtpSink, startSmtpSink } from '../../helpers/smtp-sink.ts';

function sampleContext(overrides: Partial<TemplateContext> = {}): TemplateContext {
  return {
    event: 'geofence.enter',
    event_type: 'enter',
    event_id: 'evt_0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    occurred_at: '2026-03-10T12:34:56.789Z',
    geofence: { id: 'geo-1', name: 'Depot', metadata: { zone: 'north' } },
    device: {
      id: 'dev-1',
      name: 'Truck 7',
      external_id: 'T-7',
      user_id: null,
      metadata: { plate: 'B-XY 123' },
    },
    point: { lat: 52.52, lng: 13.405 },
    metadata: {},
    workflow: { id: 'wf-1', name: 'Depot alerts' },
    payload_json: '{"event":"geofence.enter"}',
    test: false,
    ...overrides,
  };
}

const withGeofenceName = (name: string) => sampleContext({ geofence: { id: 'geo-1', name, metadata: {} } });

/** A real SMTP server with rules the sink does not have; it keeps what it accepts. */
interface StrictServer {
  url(credentials?: string): string;
  readonly messages: SinkMessage[];
  close(): Promise<void>;
}

async function startStrictServer(rules: {
  refuseRecipient?: (address: string) => boolean;
  /** Refuses every login, repeating the credentials it was given (a careless server would). */
  refuseLogins?: boolean;
}): Promise<StrictServer> {
  const messages: SinkMessage[] = [];
  const server = new SMTPServer({
    authOptional: !rules.refuseLogins,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      callback(new Error(`Invalid login for ${auth.username} with ${auth.password}`));
    },
    onRcptTo(address, _session, callback) {
      if (rules.refuseRecipient?.(address.address)) {
        callback(Object.assign(new Error('5.1.1 Mailbox unavailable'), { responseCode: 550 }));
      } else {
        callback();
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push(
          parseMessage(
            Buffer.concat(chunks).toString('utf8'),
            session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          ),
        );
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: (credentials) => `smtp://${credentials ? `${credentials}@` : ''}127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = new SMTPServer({ logger: false });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(`email action (Mailer on ${IS_POSTGRES ? 'PostgreSQL' : 'SQLite'})`, () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let sink: SmtpSink;
  let sinkMailer: Mailer;
  const logger = pino({ level: 'silent' });

  const mailerFor = (smtpUrl: string | undefined) =>
    new Mailer({ db: handle.db, capabilities: handle.capabilities, clock: systemClock, logger, smtpUrl });

  /** The runtime a worker hands an executor; the e-mail action only uses `mail`. */
  const runtimeWith = (mail: MailSender): ActionRuntime => ({
    dispatcher: getGlobalDispatcher(),
    allowPrivateTargets: true,
    timeoutMs: 10_000,
    mail,
    databases: {
      insertEvent: () => Promise.reject(new Error('e-mail actions insert no rows')),
      close: async () => {},
    },
  });

  const send = (config: ActionConfigs['email'], context = sampleContext(), mailer = sinkMailer) =>
    emailAction.execute(config, context, runtimeWith(mailer));

  before(async () => {
    testDb = await createTestDatabase();
    const target = parseDatabaseUrl(testDb.url);
    assert.ok(target);
    handle = openDatabase(target, testDb.schema ? { schema: testDb.schema } : {});
    await migrateToLatest(handle);
    sink = await startSmtpSink();
    sinkMailer = mailerFor(sink.url);
  });
  after(async () => {
    await sinkMailer?.close();
    await sink?.close();
    await handle?.close();
    await testDb?.drop();
  });

  test('one message reaches every recipient; the outcome keeps the server’s reply; the outbox stays empty', async () => {
    const to = [uniqueEmail('first'), uniqueEmail('second'), uniqueEmail('third')];
    const before = sink.messages.length;
    const outcome = await send({ to });
    assert.equal(outcome.success, true, outcome.errorMessage ?? '');
    assert.equal(outcome.statusCode, null);
    assert.equal(outcome.errorMessage, null);
    assert.match(outcome.responseExcerpt ?? '', /^250 /);
    assert.equal(sink.messages.length, before + 1, 'one message for all recipients');
    const message = sink.messagesTo(to[0] ?? '')[0];
    assert.ok(message);
    assert.deepEqual(message.to, to);
    assert.equal(message.from, 'no-reply@geofence.local');
    assert.match(message.raw, new RegExp(`^From: ${MAIL_FROM.replace(/[<>]/g, '.')}`, 'm'));
    for (const address of to) assert.ok(message.raw.includes(address), `${address} in the To header`);
    const outbox = await handle.db.selectFrom('email_outbox').select('id').execute();
    assert.deepEqual(outbox, [], 'action mail is not account mail');
  });

  test('without subject and body: the default subject and a summary of the event', async () => {
    const to = uniqueEmail('defaults');
    const outcome = await send({ to: [to] });
    assert.equal(outcome.success, true, outcome.errorMessage ?? '');
    const message = sink.messagesTo(to)[0];
    assert.ok(message);
    assert.equal(message.subject, 'Truck 7 entered Depot');
    assert.equal(message.text.trimEnd(), defaultEmailBody(sampleContext()).trimEnd());
    for (const line of [
      'Device: Truck 7 (dev-1)',
      'Event: geofence.enter',
      'Geofence: Depot (geo-1)',
      'Point: 52.52, 13.405',
      'Time: 2026-03-10T12:34:56.789Z',
      'Event id: evt_0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    ]) {
      assert.ok(message.text.split('\n').includes(line), `${line} in:\n${message.text}`);
    }
  });

  test('a test run says so in the default subject and body', async () => {
    const to = uniqueEmail('test-run');
    const context = sampleContext({ event: 'geofence.exit', event_type: 'exit', test: true });
    assert.equal((await send({ to: [to] }, context)).success, true);
    const message = sink.messagesTo(to)[0];
    assert.equal(message?.subject, '[test] Truck 7 left Depot');
    assert.match(message?.text ?? '', /as a test run/);
  });

  test('subject and body templates render as plain text: values unescaped, unknown names empty', async () => {
    const to = uniqueEmail('templates');
    const context = sampleContext({
      device: {
        id: 'dev-1',
        name: 'Truck <7> & "Co"',
        external_id: null,
        user_id: null,
        metadata: { plate: 'B-XY 123' },
      },
    });
    const outcome = await send(
      {
        to: [to],
        subject: '{{device.name}} {{event_type}} {{geofence.name}}{{missing}}',
        body: 'Plate {{device.metadata.plate}} at {{point.lat}},{{point.lng}}\nzone={{geofence.metadata.zone}} {{{device.name}}}',
      },
      context,
    );
    assert.equal(outcome.success, true, outcome.errorMessage ?? '');
    const message = sink.messagesTo(to)[0];
    assert.ok(message);
    assert.equal(message.subject, 'Truck <7> & "Co" enter Depot');
    assert.equal(message.text.trimEnd(), 'Plate B-XY 123 at 52.52,13.405\nzone=north Truck <7> & "Co"');
  });

  test('line breaks in a geofence name cannot add headers: the subject keeps them as spaces', async () => {
    const to = uniqueEmail('injection');
    const victim = uniqueEmail('victim');
    const name = `Depot\r\nBcc: ${victim}\nX-Injected: yes\rZ`;
    for (const subject of [undefined, 'Alert: {{geofence.name}}']) {
      const outcome = await send(
        subject === undefined ? { to: [to] } : { to: [to], subject },
        withGeofenceName(name),
      );
      assert.equal(outcome.success, true, outcome.errorMessage ?? '');
    }
    const [byDefault, byTemplate] = sink.messagesTo(to);
    assert.equal(byDefault?.subject, `Truck 7 entered Depot Bcc: ${victim} X-Injected: yes Z`);
    assert.equal(byTemplate?.subject, `Alert: Depot Bcc: ${victim} X-Injected: yes Z`);
    for (const message of [byDefault, byTemplate]) {
      assert.ok(message);
      assert.deepEqual(message.to, [to]);
      const head = message.raw.slice(0, message.raw.search(/\r?\n\r?\n/));
      assert.doesNotMatch(head, /^(Bcc|X-Injected):/im);
    }
    assert.deepEqual(sink.messagesTo(victim), []);
  });

  test('the subject handed to the transport is one line (nodemailer folds line breaks too; this holds for any sender)', () => {
    const context = withGeofenceName('Depot\r\nBcc: x@example.com\nX-Injected: yes\rZ');
    assert.equal(
      emailSubject({ to: ['a@example.com'] }, context),
      'Truck 7 entered Depot Bcc: x@example.com X-Injected: yes Z',
    );
    assert.equal(
      emailSubject({ to: ['a@example.com'], subject: '{{geofence.name}}\n{{device.name}}' }, context),
      'Depot Bcc: x@example.com X-Injected: yes Z Truck 7',
    );
  });

  test('without SMTP_URL the attempt fails and says why', async () => {
    const mailer = mailerFor(undefined);
    try {
      const outcome = await send({ to: [uniqueEmail('unconfigured')] }, sampleContext(), mailer);
      assert.deepEqual(outcome, {
        success: false,
        statusCode: null,
        errorMessage: SMTP_NOT_CONFIGURED,
        responseExcerpt: null,
      });
      assert.equal(SMTP_NOT_CONFIGURED, 'SMTP_URL is not configured: e-mail actions cannot be sent');
    } finally {
      await mailer.close();
    }
  });

  test('a server refusing every recipient: failure with its reply code and text', async () => {
    const server = await startStrictServer({ refuseRecipient: () => true });
    const mailer = mailerFor(server.url());
    try {
      const outcome = await send(
        { to: [uniqueEmail('refused-a'), uniqueEmail('refused-b')] },
        sampleContext(),
        mailer,
      );
      assert.equal(outcome.success, false);
      assert.equal(outcome.statusCode, null);
      assert.equal(outcome.responseExcerpt, null);
      assert.match(outcome.errorMessage ?? '', /^SMTP: .*550 5\.1\.1 Mailbox unavailable/);
      assert.deepEqual(server.messages, []);
    } finally {
      await mailer.close();
      await server.close();
    }
  });

  test('a server refusing some recipients: sent to the others, the refusals kept in the excerpt', async () => {
    const kept = uniqueEmail('kept');
    const refused = uniqueEmail('refused');
    const server = await startStrictServer({ refuseRecipient: (address) => address === refused });
    const mailer = mailerFor(server.url());
    try {
      const outcome = await send({ to: [kept, refused] }, sampleContext(), mailer);
      assert.equal(outcome.success, true, outcome.errorMessage ?? '');
      assert.match(outcome.responseExcerpt ?? '', /^250 .*\(refused: .*550 5\.1\.1 Mailbox unavailable\)$/);
      assert.ok(outcome.responseExcerpt?.includes(refused));
      assert.equal(server.messages.length, 1);
      assert.deepEqual(server.messages[0]?.to, [kept]);
    } finally {
      await mailer.close();
      await server.close();
    }
  });

  test('a refused login: failure naming the reply, without the credentials of SMTP_URL', async () => {
    const server = await startStrictServer({ refuseLogins: true });
    const mailer = mailerFor(server.url('mailer-user:s3cr%40t-Pass%2Fword'));
    try {
      const outcome = await send({ to: [uniqueEmail('login')] }, sampleContext(), mailer);
      assert.equal(outcome.success, false);
      const error = outcome.errorMessage ?? '';
      assert.match(error, /^SMTP: .*535 /);
      for (const secret of ['mailer-user', 's3cr@t-Pass/word', 's3cr%40t-Pass%2Fword']) {
        assert.ok(!error.includes(secret), `${secret} in: ${error}`);
      }
      assert.match(error, /Invalid login for … with …/, 'the server repeated both; both are blanked');
      assert.deepEqual(server.messages, []);
    } finally {
      await mailer.close();
      await server.close();
    }
  });

  test('a server that is not listening: failure naming the refused connection', async () => {
    const mailer = mailerFor(`smtp://127.0.0.1:${await closedPort()}`);
    try {
      const outcome = await send({ to: [uniqueEmail('nobody')] }, sampleContext(), mailer);
      assert.equal(outcome.success, false);
      assert.equal(outcome.responseExcerpt, null);
      assert.match(outcome.errorMessage ?? '', /^SMTP: .*ECONNREFUSED/);
    } finally {
      await mailer.close();
    }
  });
});
