/**
 * Concurrent edits of a workflow (ADR 014, "Concurrent edits"): every answer carries the version
 * as `version` and `ETag`; `PATCH` with `If-Match` applies only to the version named (412
 * `PRECONDITION_FAILED` otherwise, nothing changed; 400 for an If-Match that is not `*` or quoted
 * tags); of several PATCHes based on one version, one wins.
 * Secrets left out are kept from the version the change applies to, so an edit based on an old
 * list of actions can no longer give one action another's secret.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../../src/shared/encryption.ts';
import { findWorkflow, updateWorkflow as updateRow } from '../../src/workflows/workflows.repository.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import { TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import type { WorkflowOut } from './workflow-helpers.ts';

const ALERTS = 'https://hooks.slack.com/services/T0ALERTS/B0ALERTS/alertsChannelSecretPath';
const BILLING = 'https://hooks.slack.com/services/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';
const slack = (channel: string, webhookUrl?: string) => ({
  type: 'slack',
  config: { message: `to ${channel}`, ...(webhookUrl ? { webhook_url: webhookUrl } : {}) },
});

describe('workflow versions and If-Match', () => {
  let t: TestApp;
  let jwt: { token: string };
  let geofenceId: string;
  const box = new SecretBox(TEST_ENCRYPTION_KEY);

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'versions')).tokens.access_token };
    geofenceId = (await createGeofence(t, jwt, { name: 'Depot', geometry: circle(13.4, 52.5, 300) })).id;
  });
  after(async () => {
    await t.close();
  });

  const create = async () => {
    const res = await call(t, '/workflows', {
      ...jwt,
      body: {
        name: 'Two channels',
        trigger: { geofence_id: geofenceId, event_types: ['enter'] },
        actions: [slack('alerts', ALERTS), slack('billing', BILLING)],
      },
    });
    return { workflow: expectStatus<WorkflowOut>(res, 201, 'create'), etag: res.headers.etag };
  };
  const patch = (id: string, body: Record<string, unknown>, ifMatch?: string) =>
    call(t, `/workflows/${id}`, {
      ...jwt,
      method: 'PATCH',
      body,
      ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }),
    });
  /** Each action's text and opened Slack URL, as stored. */
  const stored = async (id: string) => {
    const row = await t.deps.database.db
      .selectFrom('workflows')
      .select(['actions', 'version'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const actions = JSON.parse(
      typeof row.actions === 'string' ? row.actions : JSON.stringify(row.actions),
    ) as Array<{
      config: { message: string };
      sealed: { webhook_url: string };
    }>;
    return {
      version: Number(row.version),
      actions: actions.map((a) => `${a.config.message} → ${box.open(a.sealed.webhook_url)}`),
    };
  };

  test('answers carry the version, as `version` and as the ETag; every change raises it', async () => {
    const { workflow, etag } = await create();
    assert.equal(workflow.version, 1);
    assert.equal(etag, '"1"');
    const read = await call(t, `/workflows/${workflow.id}`, jwt);
    assert.equal(read.headers.etag, '"1"');
    const renamed = await patch(workflow.id, { name: 'Renamed' });
    assert.equal(expectStatus<WorkflowOut>(renamed, 200, 'rename').version, 2);
    assert.equal(renamed.headers.etag, '"2"');
    const listed = expectStatus<{ results: WorkflowOut[] }>(await call(t, '/workflows', jwt), 200, 'list');
    assert.equal(listed.results.find((w) => w.id === workflow.id)?.version, 2);
  });

  test('If-Match naming the current version applies the change; any other version → 412, nothing changed', async () => {
    const { workflow } = await create();
    const applied = await patch(workflow.id, { name: 'Checked' }, '"1"');
    assert.equal(expectStatus<WorkflowOut>(applied, 200, 'matching If-Match').name, 'Checked');
    assert.equal(applied.headers.etag, '"2"');

    for (const stale of ['"1"', 'W/"2"', '"two"', '"3"']) {
      const refused = await patch(workflow.id, { name: 'Lost' }, stale);
      expectError(refused, 412, 'PRECONDITION_FAILED');
      assert.match(JSON.parse(refused.body).detail, /version 2/);
    }
    // Not `*` or quoted tags (the body's version sent without its quotes, say): 400, says how.
    for (const malformed of ['2', "'2'", '', ' , ']) {
      const refused = await patch(workflow.id, { name: 'Lost' }, malformed);
      expectError(refused, 400, 'VALIDATION_ERROR');
      assert.match(JSON.parse(refused.body).detail, /If-Match: "3"/);
    }
    // The workflow and the precondition are checked before the body's references.
    const unknownFence = {
      trigger: { geofence_id: '00000000-0000-7000-8000-000000000001', event_types: ['enter'] },
    };
    expectError(await patch(workflow.id, unknownFence, '"1"'), 412, 'PRECONDITION_FAILED');
    expectError(await patch('00000000-0000-7000-8000-000000000000', unknownFence, '"1"'), 404, 'NOT_FOUND');
    expectError(await patch(workflow.id, unknownFence, '"2"'), 404, 'NOT_FOUND');
    const after = expectStatus<WorkflowOut>(await call(t, `/workflows/${workflow.id}`, jwt), 200, 'read');
    assert.deepEqual([after.name, after.version], ['Checked', 2]);

    // A list of tags matches when one does; `*` matches any version of an existing workflow.
    assert.equal(
      expectStatus<WorkflowOut>(await patch(workflow.id, { name: 'A' }, '"9", "2"'), 200).version,
      3,
    );
    assert.equal(expectStatus<WorkflowOut>(await patch(workflow.id, { name: 'B' }, '*'), 200).version, 4);
    expectError(await patch('00000000-0000-7000-8000-000000000000', { name: 'C' }, '*'), 404, 'NOT_FOUND');
  });

  test('an edit based on an old list of actions cannot move a secret to another action', async () => {
    const { workflow } = await create();
    // Someone swaps the two actions, sending their secrets again.
    const swapped = await patch(
      workflow.id,
      { actions: [slack('billing', BILLING), slack('alerts', ALERTS)] },
      '"1"',
    );
    expectStatus(swapped, 200, 'swap');
    // An editor who read version 1 saves the old order, leaving the secrets out.
    const stale = await patch(workflow.id, { actions: [slack('alerts'), slack('billing')] }, '"1"');
    expectError(stale, 412, 'PRECONDITION_FAILED');
    assert.deepEqual(await stored(workflow.id), {
      version: 2,
      actions: [`to billing → ${BILLING}`, `to alerts → ${ALERTS}`],
    });
  });

  test('of several changes based on one version, exactly one applies', async () => {
    const { workflow } = await create();
    const answers = await Promise.all(
      ['first', 'second', 'third', 'fourth'].map((name) => patch(workflow.id, { name }, '"1"')),
    );
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [200, 412, 412, 412]);
    const winner = answers.find((a) => a.statusCode === 200);
    const read = expectStatus<WorkflowOut>(await call(t, `/workflows/${workflow.id}`, jwt), 200, 'read');
    assert.equal(read.name, JSON.parse(winner?.body ?? '{}').name);
    assert.equal(read.version, 2);
  });

  test('the write itself is conditional: based on a version no longer current, it changes nothing', async () => {
    const { workflow } = await create();
    expectStatus(await patch(workflow.id, { name: 'Newer' }), 200, 'newer');
    const { db } = t.deps.database;
    const { workspace_id: workspaceId } = await db
      .selectFrom('workflows')
      .select('workspace_id')
      .where('id', '=', workflow.id)
      .executeTakeFirstOrThrow();
    assert.equal(await updateRow(db, workspaceId, workflow.id, 1, { name: 'Stale' }, new Date()), undefined);
    const current = await findWorkflow(db, workspaceId, workflow.id);
    assert.deepEqual([current?.name, current?.version], ['Newer', 2]);
    const applied = await updateRow(db, workspaceId, workflow.id, 2, { name: 'Current' }, new Date());
    assert.deepEqual([applied?.name, applied?.version], ['Current', 3]);
  });

  test('without If-Match, concurrent changes all apply, each to the version before it', async () => {
    const { workflow } = await create();
    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) => patch(workflow.id, { description: `change ${n}` })),
    );
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [200, 200, 200, 200],
    );
    const versions = answers.map((a) => expectStatus<WorkflowOut>(a, 200).version).sort();
    assert.deepEqual(versions, [2, 3, 4, 5]);
    assert.equal((await stored(workflow.id)).version, 5);
  });
});
