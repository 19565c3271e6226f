/**
 * The workflow queue's division of labour (ADR 014): the workflow worker claims the actions it
 * runs itself and never a `webhook` action, which is a delivery of the delivery worker; the run
 * ends `success` once both kinds are done.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drainOutbox } from '../../src/engine.ts';
import { FakeChatServices, SLACK_PATH } from '../helpers/fake-chat-services.ts';
import { createWebhook, eventSource, Receiver } from '../webhooks/delivery-helpers.ts';
import { createWorkflow, listRuns, workflowFixture } from './workflow-helpers.ts';

describe('workflow queue', () => {
  const fixture = workflowFixture();
  let chat: FakeChatServices;
  let receiver: Receiver;

  before(async () => {
    chat = await FakeChatServices.start();
    receiver = await Receiver.start();
  });
  after(async () => {
    await chat.close();
    await receiver.close();
  });

  test('the workflow worker runs its own jobs; a webhook action goes to the delivery worker', async () => {
    const { h } = fixture;
    const { geofence, step } = await eventSource(h);
    // Subscribed to another geofence: the webhook gets the workflow's delivery alone.
    const elsewhere = await eventSource(h, 2, 40);
    const webhook = await createWebhook(h, { url: receiver.url, geofence_ids: [elsewhere.geofence.id] });
    const workflow = await createWorkflow(h, {
      trigger: { geofence_id: geofence.id, event_types: ['enter'] },
      actions: [
        { type: 'webhook', config: { webhook_id: webhook.id } },
        { type: 'slack', config: { webhook_url: chat.url(SLACK_PATH) } },
      ],
    });
    await step(true);
    await drainOutbox(h.t.deps);

    assert.equal(await h.actions.runOnce(), 1, 'the slack action only');
    assert.equal(await h.actions.runOnce(), 0, 'nothing else is the workflow worker’s');
    assert.equal(chat.accepted('slack').length, 1);
    let [run] = (await listRuns(h, workflow.id)).results;
    assert.equal(run?.status, 'pending');
    assert.deepEqual(
      run?.actions.map((a) => [a.type, a.status]),
      [
        ['webhook', 'pending'],
        ['slack', 'success'],
      ],
    );

    assert.equal(await h.worker.runOnce(), 1, 'the webhook action’s delivery');
    assert.equal(receiver.requests.length, 1);
    [run] = (await listRuns(h, workflow.id)).results;
    assert.equal(run?.status, 'success');
    assert.deepEqual(
      run?.actions.map((a) => [a.type, a.status, a.attempt_count]),
      [
        ['webhook', 'success', 1],
        ['slack', 'success', 1],
      ],
    );
  });
});
