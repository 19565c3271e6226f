/**
 * Contract §1: every operation of the OpenAPI document has a unique `operationId`, camelCase verb +
 * resource, so a generated client names its methods. The ids are declared on each route, next to
 * its summary; the list below pins them, because renaming one renames a method in every client
 * generated from the document: a new route adds its line, a rename is a breaking change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const OPERATION_IDS: Record<string, string> = {
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /metrics': 'getMetrics',
  'POST /api/v1/auth/register': 'registerUser',
  'POST /api/v1/auth/login': 'logIn',
  'POST /api/v1/auth/refresh': 'refreshTokens',
  'POST /api/v1/auth/logout': 'logOut',
  'POST /api/v1/auth/switch-workspace': 'switchWorkspace',
  'GET /api/v1/auth/me': 'getCurrentUser',
  'GET /api/v1/auth/test-api-key': 'testApiKey',
  'POST /api/v1/auth/verify-email': 'verifyEmail',
  'POST /api/v1/auth/verify-email/resend': 'resendVerificationEmail',
  'POST /api/v1/auth/password-reset/request': 'requestPasswordReset',
  'POST /api/v1/auth/password-reset/confirm': 'confirmPasswordReset',
  'POST /api/v1/account/api-keys': 'createApiKey',
  'GET /api/v1/account/api-keys': 'listApiKeys',
  'DELETE /api/v1/account/api-keys/{api_key_id}': 'revokeApiKey',
  'GET /api/v1/account/settings': 'getAccountSettings',
  'PATCH /api/v1/account/settings': 'updateAccountSettings',
  'GET /api/v1/account/notifications': 'listNotifications',
  'POST /api/v1/account/notifications/{notification_id}/read': 'markNotificationRead',
  'POST /api/v1/account/notifications/read-all': 'markAllNotificationsRead',
  'GET /api/v1/workspaces': 'listWorkspaces',
  'POST /api/v1/workspaces': 'createWorkspace',
  'GET /api/v1/workspaces/{workspace_id}': 'getWorkspace',
  'PATCH /api/v1/workspaces/{workspace_id}': 'updateWorkspace',
  'DELETE /api/v1/workspaces/{workspace_id}': 'deleteWorkspace',
  'GET /api/v1/workspaces/{workspace_id}/members': 'listWorkspaceMembers',
  'POST /api/v1/workspaces/{workspace_id}/members': 'addWorkspaceMember',
  'PATCH /api/v1/workspaces/{workspace_id}/members/{user_id}': 'updateWorkspaceMember',
  'DELETE /api/v1/workspaces/{workspace_id}/members/{user_id}': 'removeWorkspaceMember',
  'GET /api/v1/workspaces/{workspace_id}/invitations': 'listWorkspaceInvitations',
  'POST /api/v1/workspaces/{workspace_id}/invitations/{invitation_id}/resend': 'resendWorkspaceInvitation',
  'DELETE /api/v1/workspaces/{workspace_id}/invitations/{invitation_id}': 'revokeWorkspaceInvitation',
  'POST /api/v1/workspaces/invitations/accept': 'acceptWorkspaceInvitation',
  'POST /api/v1/geofences': 'createGeofence',
  'GET /api/v1/geofences': 'listGeofences',
  'POST /api/v1/geofences/batch': 'upsertGeofences',
  'GET /api/v1/geofences/export': 'exportGeofences',
  'GET /api/v1/geofences/contains': 'listGeofencesContainingPoint',
  'GET /api/v1/geofences/{geofence_id}': 'getGeofence',
  'PATCH /api/v1/geofences/{geofence_id}': 'updateGeofence',
  'DELETE /api/v1/geofences/{geofence_id}': 'deleteGeofence',
  'GET /api/v1/geofences/{geofence_id}/devices': 'listGeofenceDevices',
  'POST /api/v1/devices': 'createDevice',
  'GET /api/v1/devices': 'listDevices',
  'GET /api/v1/devices/{device_id}': 'getDevice',
  'PATCH /api/v1/devices/{device_id}': 'updateDevice',
  'DELETE /api/v1/devices/{device_id}': 'deleteDevice',
  'GET /api/v1/devices/positions': 'listDevicePositions',
  'POST /api/v1/stream/tokens': 'createStreamToken',
  'GET /api/v1/stream': 'openStream',
  'POST /api/v1/devices/{device_id}/locations': 'createLocation',
  'GET /api/v1/devices/{device_id}/locations': 'listDeviceLocations',
  'POST /api/v1/locations/batch': 'createLocationBatch',
  'POST /api/v1/devices/{device_id}/tokens': 'createDeviceToken',
  'GET /api/v1/devices/{device_id}/tokens': 'listDeviceTokens',
  'DELETE /api/v1/devices/{device_id}/tokens/{token_id}': 'revokeDeviceToken',
  'POST /api/v1/ingest/owntracks': 'ingestOwnTracks',
  'GET /api/v1/ingest/osmand': 'ingestOsmAndQuery',
  'POST /api/v1/ingest/osmand': 'ingestOsmAnd',
  'POST /api/v1/ingest/overland': 'ingestOverland',
  'GET /api/v1/events': 'listEvents',
  'GET /api/v1/events/{event_id}': 'getEvent',
  'GET /api/v1/events/{event_id}/payload': 'getEventPayload',
  'GET /api/v1/events/{event_id}/workflow-runs': 'listEventWorkflowRuns',
  'POST /api/v1/devices/{device_id}/sessions': 'startTrackingSession',
  'POST /api/v1/sessions/{session_id}/stop': 'stopTrackingSession',
  'GET /api/v1/sessions': 'listTrackingSessions',
  'GET /api/v1/sessions/{session_id}': 'getTrackingSession',
  'GET /api/v1/sessions/{session_id}/locations': 'listTrackingSessionLocations',
  'POST /api/v1/webhooks': 'createWebhook',
  'GET /api/v1/webhooks': 'listWebhooks',
  'GET /api/v1/webhooks/{webhook_id}': 'getWebhook',
  'PATCH /api/v1/webhooks/{webhook_id}': 'updateWebhook',
  'DELETE /api/v1/webhooks/{webhook_id}': 'deleteWebhook',
  'GET /api/v1/webhooks/{webhook_id}/secret': 'getWebhookSecret',
  'POST /api/v1/webhooks/{webhook_id}/rotate-secret': 'rotateWebhookSecret',
  'GET /api/v1/webhooks/deliveries': 'listDeliveries',
  'GET /api/v1/webhooks/{webhook_id}/deliveries': 'listWebhookDeliveries',
  'GET /api/v1/webhooks/deliveries/{delivery_id}': 'getDelivery',
  'POST /api/v1/webhooks/deliveries/{delivery_id}/retry': 'retryDelivery',
  'POST /api/v1/webhooks/{webhook_id}/test': 'testWebhook',
  'GET /api/v1/webhooks/dlq': 'listDeadLetters',
  'GET /api/v1/webhooks/dlq/stats': 'getDeadLetterStats',
  'POST /api/v1/webhooks/dlq/{dlq_id}/retry': 'retryDeadLetter',
  'POST /api/v1/webhooks/dlq/retry': 'retryDeadLetters',
  'POST /api/v1/webhooks/dlq/retry-matching': 'retryMatchingDeadLetters',
  'GET /api/v1/webhooks/dlq/retry-matching/{job_id}': 'getDeadLetterRetryJob',
  'POST /api/v1/webhooks/deliveries/{delivery_id}/resend': 'resendDelivery',
  'GET /api/v1/webhooks/{webhook_id}/health': 'getWebhookHealth',
  'POST /api/v1/workflows': 'createWorkflow',
  'GET /api/v1/workflows': 'listWorkflows',
  'GET /api/v1/workflows/{workflow_id}': 'getWorkflow',
  'PATCH /api/v1/workflows/{workflow_id}': 'updateWorkflow',
  'DELETE /api/v1/workflows/{workflow_id}': 'deleteWorkflow',
  'GET /api/v1/workflows/{workflow_id}/runs': 'listWorkflowRuns',
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}': 'getWorkflowRun',
  'POST /api/v1/workflows/{workflow_id}/test': 'testWorkflow',
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/retry': 'retryWorkflowRun',
  'GET /api/v1/subscriptions/plans': 'listPlans',
  'GET /api/v1/subscriptions/current': 'getSubscription',
  'PUT /api/v1/subscriptions/current': 'changePlan',
  'GET /api/v1/subscriptions/usage': 'getUsage',
  'GET /api/v1/subscriptions/invoices': 'listInvoices',
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

describe('OpenAPI operationId', () => {
  let t: TestApp;
  let operations: Array<{ label: string; operationId: unknown }>;

  before(async () => {
    t = await startTestApp();
    const doc = (await t.app.inject({ url: '/openapi/openapi.json' })).json() as {
      paths: Record<string, Record<string, { operationId?: unknown }>>;
    };
    operations = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
      Object.entries(byMethod)
        .filter(([method]) => METHODS.has(method))
        .map(([method, operation]) => ({
          label: `${method.toUpperCase()} ${path}`,
          operationId: operation.operationId,
        })),
    );
  });
  after(async () => t?.close());

  test('every operation has one, camelCase', () => {
    assert.ok(operations.length >= 90, `${operations.length} operations`);
    for (const { label, operationId } of operations) {
      assert.equal(typeof operationId, 'string', `${label} has an operationId`);
      assert.match(String(operationId), /^[a-z][a-zA-Z0-9]+$/, `${label}: ${operationId}`);
    }
  });

  test('no two operations share one', () => {
    const seen = new Map<unknown, string>();
    for (const { label, operationId } of operations) {
      assert.equal(
        seen.get(operationId),
        undefined,
        `${label} reuses ${operationId} of ${seen.get(operationId)}`,
      );
      seen.set(operationId, label);
    }
  });

  test('they are the published names (a new route adds its line; a rename breaks clients)', () => {
    const actual = Object.fromEntries(operations.map(({ label, operationId }) => [label, operationId]));
    assert.deepEqual(actual, OPERATION_IDS);
  });
});
