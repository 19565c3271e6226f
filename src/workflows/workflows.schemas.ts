/**
 * Request and response schemas of /workflows (contract §6, seed §2.2): the workflow record, its
 * trigger, the runs and their actions' attempts. Action configs: action-configs.schemas.ts.
 */
import { type Static, Type } from 'typebox';
import { EVENT_TYPES, type EventType } from '../events/event-types.ts';
import { component } from '../http/components.ts';
import { Id, Nullable, PaginationQuery, StringEnum, Timestamp } from '../http/schemas.ts';
import { ACTION_TYPES, WorkflowAction } from './action-configs.schemas.ts';
import { TEMPLATE_VARIABLES } from './templates.ts';

/** Event types a trigger can name (contract §6, `dwell` §4.5): every event type. */
export const TRIGGER_EVENT_TYPES = EVENT_TYPES;
export type TriggerEventType = EventType;
export const RUN_STATUSES = ['pending', 'success', 'failed'] as const;
export const MAX_ACTIONS = 10;

export const WORKFLOW_DESCRIPTION =
  'An automation: when a device has an event of `trigger.event_types` in the trigger geofence, every ' +
  'action runs once, independently, each retried on WEBHOOK_RETRY_SCHEDULE. Templates (`message`, ' +
  '`subject`, `body`) are Mustache over the variables ' +
  TEMPLATE_VARIABLES.map((v) => `\`{{${v}}}\``).join(', ') +
  '; an unknown variable renders empty. Values are escaped for the target (Slack `&`, `<`, `>`; plain ' +
  'text for e-mail and SMS; JSON bodies are built by serialisation). Rendering is bounded, per ' +
  'template: at most 65,536 bytes of output (UTF-8, after escaping), 10,000 section iterations (each ' +
  'section body rendered, for an item, a truthy value or an inverted section, nested ones included) ' +
  'and 100,000 rendering steps (tags visited and names looked up). A render stops at the first bound ' +
  'it passes and the attempt fails for good at once, without retries (the same event would stop at ' +
  'the same bound), with an `error_message` naming the bound; fix the template and retry the run.';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Nullable(Type.String({ maxLength: 2000 }));
const EventTypes = Type.Array(StringEnum(TRIGGER_EVENT_TYPES), {
  minItems: 1,
  uniqueItems: true,
  description:
    "Event types that start the workflow; `dwell` fires once per visit after the geofence's `dwell_seconds`",
});

export const TriggerSchema = component(
  'WorkflowTrigger',
  Type.Object(
    {
      geofence_id: Type.String({
        format: 'uuid',
        description: 'A geofence of the workspace (404 "Geofence not found" otherwise)',
      }),
      event_types: EventTypes,
    },
    { additionalProperties: false },
  ),
);

const Actions = Type.Array(WorkflowAction, {
  minItems: 1,
  maxItems: MAX_ACTIONS,
  description: `1..${MAX_ACTIONS} actions, run independently of each other`,
});

/**
 * An action as answered: the config as sent (WorkflowAction), secrets masked. Not the request's
 * `oneOf`: a masked secret need not match the input's formats.
 */
export const WorkflowActionOut = component(
  'WorkflowActionRecord',
  Type.Object({
    type: StringEnum(ACTION_TYPES),
    config: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description: 'The config of the type (see WorkflowAction); secrets answered masked',
    }),
  }),
);

export const WorkflowSchema = component(
  'Workflow',
  Type.Object(
    {
      id: Id,
      name: Type.String(),
      description: Nullable(Type.String()),
      trigger: TriggerSchema,
      actions: Type.Array(WorkflowActionOut),
      enabled: Type.Boolean(),
      created_at: Timestamp,
      updated_at: Timestamp,
      version: Type.Integer({
        minimum: 1,
        description:
          '1 at creation, raised by every change; also the answer\'s `ETag` (`"3"`), which `If-Match` on PATCH names',
      }),
    },
    { description: WORKFLOW_DESCRIPTION },
  ),
);

export const CreateWorkflowBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    trigger: TriggerSchema,
    actions: Actions,
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateWorkflowBody = Static<typeof CreateWorkflowBody>;

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      maxLength: 1000,
      description:
        'The ETag of the version the change is based on (`"3"`), or `*`: otherwise 412 and nothing changes',
    }),
  ),
});

export const UpdateWorkflowBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    trigger: Type.Optional(TriggerSchema),
    actions: Type.Optional(
      Type.Array(WorkflowAction, {
        minItems: 1,
        maxItems: MAX_ACTIONS,
        description:
          'Replaces the actions whole. A secret left out (or sent back masked, as answered) keeps the ' +
          'value stored for the action at the same position, when that action has the same type.',
      }),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'Partial update: absent fields keep their value' },
);
export type UpdateWorkflowBody = Static<typeof UpdateWorkflowBody>;

export const WorkflowParams = Type.Object({ workflow_id: Type.String() });
export const RunParams = Type.Object({ workflow_id: Type.String(), run_id: Type.String() });

export const ListWorkflowsQuery = Type.Object({
  ...PaginationQuery.properties,
  enabled: Type.Optional(Type.Boolean({ description: 'Only enabled (true) or disabled (false) workflows' })),
  geofence_id: Type.Optional(Type.String({ description: 'Only workflows triggered by this geofence' })),
});

export const ListRunsQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(StringEnum(RUN_STATUSES, { description: 'Only runs in this status' })),
});

const ActionRunFields = {
  position: Type.Integer({ description: 'Index of the action in the workflow’s `actions`' }),
  type: StringEnum(ACTION_TYPES),
  status: StringEnum(RUN_STATUSES),
  attempt_count: Type.Integer(),
  response_status_code: Nullable(
    Type.Integer({ description: 'HTTP status of the last attempt, where there is one' }),
  ),
  error_message: Nullable(Type.String({ description: 'Why the last attempt failed' })),
  next_retry_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  delivery_id: Nullable(
    Type.String({ description: 'For a `webhook` action: its delivery (GET /webhooks/deliveries/{id})' }),
  ),
};

export const ActionRunSchema = component('WorkflowActionRun', Type.Object(ActionRunFields));

export const ActionAttemptSchema = component(
  'WorkflowActionAttempt',
  Type.Object({
    n: Type.Integer(),
    started_at: Timestamp,
    duration_ms: Type.Number(),
    response_status_code: Nullable(Type.Integer()),
    error_message: Nullable(Type.String()),
    response_excerpt: Nullable(Type.String({ description: 'At most 1 KiB of what the target answered' })),
  }),
);

const RunFields = {
  id: Id,
  workflow_id: Id,
  event_id: Type.String({ description: 'Seed §6.3 event id (`workflow_test_<epoch>` for a test run)' }),
  event_type: Type.String({ description: '`geofence.enter`, `geofence.exit`, `geofence.dwell`' }),
  test: Type.Boolean({ description: 'Started by POST /workflows/{id}/test' }),
  status: StringEnum(RUN_STATUSES, {
    description:
      '`pending` while any action is; `success` when all succeeded; `failed` when all finished and one failed for good',
  }),
  created_at: Timestamp,
  finished_at: Nullable(Timestamp),
};

export const RunSchema = component(
  'WorkflowRun',
  Type.Object({ ...RunFields, actions: Type.Array(ActionRunSchema) }),
);

export const RunDetailSchema = component(
  'WorkflowRunDetail',
  Type.Object({
    ...RunFields,
    actions: Type.Array(Type.Object({ ...ActionRunFields, attempts: Type.Array(ActionAttemptSchema) })),
  }),
);

export const TestRunSchema = component(
  'WorkflowTestRun',
  Type.Object({ run_id: Id }, { description: 'The run started with a sample event' }),
);
