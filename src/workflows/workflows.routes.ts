/** /workflows (contract §6, seed §2.2, §4.3): workflow CRUD, runs, a test run, a run's retry. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../auth/route-auth.ts';
import { entityTag, ifMatchPrecondition } from '../http/entity-tags.ts';
import { errorResponses, ListOf, page } from '../http/schemas.ts';
import { ValidationError } from '../shared/errors.ts';
import * as runs from './runs.service.ts';
import { runDetailOut, runOut, workflowOut } from './workflows.output.ts';
import {
  CreateWorkflowBody,
  IfMatchHeaders,
  ListRunsQuery,
  ListWorkflowsQuery,
  RunDetailSchema,
  RunParams,
  RunSchema,
  TestRunSchema,
  UpdateWorkflowBody,
  WorkflowParams,
  WorkflowSchema,
} from './workflows.schemas.ts';
import * as workflows from './workflows.service.ts';

const tags = ['workflows'];
const read = { auth: { scope: 'workflows:read' as const } };
const write = { auth: { scope: 'workflows:write' as const } };

const CHECKS_NOTE =
  'A trigger geofence that is not the workspace’s → 404 "Geofence not found". A bad action config → 422 ' +
  'at `["body","actions",<i>,"config",…]`; an unknown type → 422 at its `type`; a template that does not ' +
  'parse, a missing secret or a `webhook_id` that is not a webhook of the workspace → 422 at its field. An ' +
  'outbound target (chat webhook URL, Twilio base URL, AWS endpoint, database host) that is a literal ' +
  'loopback, private, link-local, CGNAT, multicast or metadata address → 400 unless ' +
  'WEBHOOK_ALLOW_PRIVATE_TARGETS=true; a host name resolving to one fails the attempt.';

export type WorkflowRoutesContext = workflows.WorkflowsContext & runs.RunsContext;

export async function workflowRoutes(fastify: FastifyInstance, ctx: WorkflowRoutesContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/workflows',
    {
      config: write,
      schema: {
        operationId: 'createWorkflow',
        tags,
        summary: 'Create a workflow',
        description: `Secrets in action configs are stored encrypted and answered masked. ${CHECKS_NOTE}`,
        body: CreateWorkflowBody,
        response: { 201: WorkflowSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const workflow = await workflows.createWorkflow(ctx, principalOf(request).workspaceId, {
        name: b.name,
        description: b.description ?? null,
        geofenceId: b.trigger.geofence_id,
        eventTypes: b.trigger.event_types,
        actions: b.actions,
        enabled: b.enabled ?? true,
      });
      return reply.status(201).header('ETag', entityTag(workflow.version)).send(workflowOut(workflow));
    },
  );

  app.get(
    '/workflows',
    {
      config: read,
      schema: {
        operationId: 'listWorkflows',
        tags,
        summary: 'List workflows, newest first',
        querystring: ListWorkflowsQuery,
        response: { 200: ListOf(WorkflowSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, enabled, geofence_id: geofenceId } = request.query;
      const result = await workflows.listWorkflows(
        ctx,
        principalOf(request).workspaceId,
        { enabled, geofenceId },
        offset,
        limit,
      );
      return page(result.workflows.map(workflowOut), result.total, offset, limit);
    },
  );

  app.get(
    '/workflows/:workflow_id',
    {
      config: read,
      schema: {
        operationId: 'getWorkflow',
        tags,
        summary: 'One workflow',
        params: WorkflowParams,
        response: { 200: WorkflowSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const workflow = await workflows.getWorkflow(
        ctx,
        principalOf(request).workspaceId,
        request.params.workflow_id,
      );
      reply.header('ETag', entityTag(workflow.version));
      return workflowOut(workflow);
    },
  );

  app.patch(
    '/workflows/:workflow_id',
    {
      config: write,
      schema: {
        operationId: 'updateWorkflow',
        tags,
        summary: 'Update a workflow (partial)',
        description:
          'Disabling it, or changing its trigger, applies to events dispatched from then on; runs already ' +
          'started finish. Secrets left out of `actions` (or sent back masked) are kept from the action at ' +
          'the same position of the version the change applies to. With `If-Match: "<version>"` (the ETag ' +
          'of the answer the client read) the change applies only to that version: after anyone else’s ' +
          'change → 412 `PRECONDITION_FAILED` and nothing is changed; an If-Match that is not `*` or quoted ' +
          'tags → 400. Without it, the change applies to the current version (409 `CONFLICT` in the rare ' +
          `case that other changes keep landing first: try again). ${CHECKS_NOTE}`,
        params: WorkflowParams,
        headers: IfMatchHeaders,
        body: UpdateWorkflowBody,
        response: { 200: WorkflowSchema, ...errorResponses(400, 401, 403, 404, 409, 412) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const precondition = ifMatchPrecondition(request.headers['if-match']);
      if (precondition === 'malformed') {
        throw new ValidationError(
          'If-Match must be "*" or entity tags in double quotes, such as the ETag answered: If-Match: "3"',
        );
      }
      const workflow = await workflows.updateWorkflow(
        ctx,
        principalOf(request).workspaceId,
        request.params.workflow_id,
        {
          name: b.name,
          description: b.description,
          geofenceId: b.trigger?.geofence_id,
          eventTypes: b.trigger?.event_types,
          actions: b.actions,
          enabled: b.enabled,
        },
        precondition,
      );
      reply.header('ETag', entityTag(workflow.version));
      return workflowOut(workflow);
    },
  );

  app.delete(
    '/workflows/:workflow_id',
    {
      config: write,
      schema: {
        operationId: 'deleteWorkflow',
        tags,
        summary: 'Delete a workflow',
        description:
          'Its runs go with it and actions not yet done are not attempted again. Deliveries of its `webhook` ' +
          'actions stay in the webhook’s history.',
        params: WorkflowParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await workflows.deleteWorkflow(ctx, principalOf(request).workspaceId, request.params.workflow_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/workflows/:workflow_id/runs',
    {
      config: read,
      schema: {
        operationId: 'listWorkflowRuns',
        tags,
        summary: 'Runs of a workflow, newest first',
        description: 'Each run lists its actions with their status, attempt count and last error.',
        params: WorkflowParams,
        querystring: ListRunsQuery,
        response: { 200: ListOf(RunSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50, status } = request.query;
      const result = await runs.listRuns(
        ctx,
        principalOf(request).workspaceId,
        request.params.workflow_id,
        status,
        offset,
        limit,
      );
      return page(result.runs.map(runOut), result.total, offset, limit);
    },
  );

  app.get(
    '/workflows/:workflow_id/runs/:run_id',
    {
      config: read,
      schema: {
        operationId: 'getWorkflowRun',
        tags,
        summary: 'One run with every attempt of every action',
        description:
          'A `webhook` action’s attempts are its delivery’s (also at GET /webhooks/deliveries/{delivery_id}).',
        params: RunParams,
        response: { 200: RunDetailSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      runDetailOut(
        await runs.getRun(
          ctx,
          principalOf(request).workspaceId,
          request.params.workflow_id,
          request.params.run_id,
        ),
      ),
  );

  app.post(
    '/workflows/:workflow_id/test',
    {
      config: write,
      schema: {
        operationId: 'testWorkflow',
        tags,
        summary: 'Run the actions once with a sample event',
        description:
          'A sample event of the first trigger event type, in the trigger geofence (at the centre of its ' +
          'bounding box), device "Sample device", event id `workflow_test_<epoch_seconds>`. Recorded as a run ' +
          'with `test: true`; a `webhook` action sends a real signed delivery of that event.',
        params: WorkflowParams,
        response: { 202: TestRunSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const runId = await runs.testWorkflow(
        ctx,
        principalOf(request).workspaceId,
        request.params.workflow_id,
      );
      return reply.status(202).send({ run_id: runId });
    },
  );

  app.post(
    '/workflows/:workflow_id/runs/:run_id/retry',
    {
      config: write,
      schema: {
        operationId: 'retryWorkflowRun',
        tags,
        summary: 'Queue again the actions of a run that failed for good',
        description:
          'Each failed action starts again with a fresh attempt count, with the workflow’s current config for ' +
          'its position when the type is the same (a corrected URL or key applies), otherwise as it ran. A ' +
          '`webhook` action gets a new delivery. 400 when no action failed.',
        params: RunParams,
        response: { 202: RunSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const view = await runs.retryRun(
        ctx,
        principalOf(request).workspaceId,
        request.params.workflow_id,
        request.params.run_id,
      );
      return reply.status(202).send(runOut(view));
    },
  );
}
