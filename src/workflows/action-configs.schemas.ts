/**
 * One schema per workflow action type (contract §6): `{type, config}` objects joined in a `oneOf`
 * with a `discriminator` on `type`, so a bad config is reported inside the chosen type only
 * (`loc` `["body","actions",<i>,"config",…]`) and the OpenAPI document shows every config.
 *
 * Secret fields (`webhook_url` of chat actions, `auth_token`, `secret_access_key`,
 * `connection_url`) are optional here: creating an action without one is refused by the service
 * (422 `missing`), while an update may leave one out to keep the stored value (ADR 014).
 */
import { type Static, type TSchema, Type } from 'typebox';
import { component } from '../http/components.ts';

export const ACTION_TYPES = [
  'webhook',
  'slack',
  'email',
  'sms',
  'lambda',
  'sns',
  'teams',
  'discord',
  'database',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

const TEMPLATE_NOTE =
  'A Mustache template over the event (variables listed in the Workflow description); an unknown ' +
  'variable renders empty.';

const Message = (what: string, maxLength: number) =>
  Type.String({ minLength: 1, maxLength, description: `${what}. ${TEMPLATE_NOTE}` });

const SECRET_NOTE =
  'Stored encrypted and answered masked ("…" and at most its last 4 characters). Required when the ' +
  'action is created; an update that leaves it out (or sends the masked value back) keeps it.';

// No `format: 'uri'`: the masked value an update may send back ("https://host/…abcd") is not an
// RFC 3986 URI. A new value is checked as a URL by the service (checkActionTargets).
const ChatUrl = (service: string) =>
  Type.String({
    minLength: 1,
    maxLength: 2048,
    description: `The ${service} incoming-webhook URL (http or https). Its path is a secret: answered as the origin and a masked path. ${SECRET_NOTE}`,
  });

const Region = Type.String({
  minLength: 1,
  maxLength: 32,
  pattern: '^[a-z]{2}(-[a-z]+)+-[0-9]+$',
  description: 'AWS region, e.g. `eu-west-1`',
});
const AccessKeyId = Type.String({
  minLength: 16,
  maxLength: 128,
  pattern: '^[A-Z0-9]+$',
  description:
    'AWS access key id of an IAM user allowed to call the action (never the service’s own credentials)',
});
const SecretAccessKey = Type.String({
  minLength: 1,
  maxLength: 256,
  description: `AWS secret access key. ${SECRET_NOTE}`,
});
const AwsEndpoint = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  description:
    'Another endpoint than AWS’s own (http or https), e.g. a local emulator; it passes the same private-target rules as webhooks',
});

export const WebhookActionConfig = component(
  'WebhookActionConfig',
  Type.Object(
    {
      webhook_id: Type.String({
        format: 'uuid',
        description:
          'A webhook of the workspace: the event is delivered to it as a normal signed delivery (contract §5), whatever its own event and geofence filters say',
      }),
    },
    { additionalProperties: false },
  ),
);

const chatConfig = (name: string, service: string, defaultNote: string) =>
  component(
    name,
    Type.Object(
      {
        webhook_url: Type.Optional(ChatUrl(service)),
        message: Type.Optional(Message(`The message text; default: ${defaultNote}`, 4000)),
      },
      { additionalProperties: false },
    ),
  );

export const SlackActionConfig = chatConfig(
  'SlackActionConfig',
  'Slack',
  'a line naming the device, the event and the geofence, with the point and time (sent as `text` with a section block)',
);
export const DiscordActionConfig = chatConfig(
  'DiscordActionConfig',
  'Discord',
  'a line naming the device, the event and the geofence, with the point and time (sent as `content`)',
);
export const TeamsActionConfig = chatConfig(
  'TeamsActionConfig',
  'Microsoft Teams',
  'a message card titled with the event, with the device, geofence, point and time as facts',
);

export const EmailActionConfig = component(
  'EmailActionConfig',
  Type.Object(
    {
      to: Type.Array(Type.String({ format: 'email', maxLength: 254 }), {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description: 'Recipients',
      }),
      subject: Type.Optional(
        Message('Subject line; default "<device> <entered|left|dwelt in> <geofence>"', 998),
      ),
      body: Type.Optional(Message('Plain-text body; default a summary of the event', 20_000)),
    },
    { additionalProperties: false },
  ),
);

export const SmsActionConfig = component(
  'SmsActionConfig',
  Type.Object(
    {
      to: Type.String({
        pattern: '^\\+[1-9][0-9]{6,14}$',
        description: 'Recipient in E.164 form, e.g. +14155550123',
      }),
      from: Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Sender: a Twilio phone number in E.164 form or a messaging service / alphanumeric id',
      }),
      account_sid: Type.String({ pattern: '^AC[0-9a-fA-F]{32}$', description: 'Twilio account SID' }),
      auth_token: Type.Optional(
        Type.String({ minLength: 1, maxLength: 256, description: `Twilio auth token. ${SECRET_NOTE}` }),
      ),
      body: Type.Optional(
        Message('Message text; default one line naming the device, the event and the geofence', 1600),
      ),
      api_base_url: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          format: 'uri',
          description:
            'Base URL of the Messages API (default `https://api.twilio.com`); it passes the private-target rules',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

export const LambdaActionConfig = component(
  'LambdaActionConfig',
  Type.Object(
    {
      function_name: Type.String({
        minLength: 1,
        maxLength: 170,
        pattern: '^[A-Za-z0-9_:.\\-]+$',
        description:
          'Function name, partial or full ARN; invoked asynchronously (`InvocationType: Event`) with the seed §6.3 payload',
      }),
      region: Region,
      access_key_id: AccessKeyId,
      secret_access_key: Type.Optional(SecretAccessKey),
      endpoint: Type.Optional(AwsEndpoint),
    },
    { additionalProperties: false },
  ),
);

export const SnsActionConfig = component(
  'SnsActionConfig',
  Type.Object(
    {
      topic_arn: Type.String({
        pattern: '^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\\.fifo)?$',
        description: 'The topic to publish to',
      }),
      region: Region,
      access_key_id: AccessKeyId,
      secret_access_key: Type.Optional(SecretAccessKey),
      endpoint: Type.Optional(AwsEndpoint),
      subject: Type.Optional(Message('Subject (used by e-mail subscriptions); default none', 100)),
      message: Type.Optional(Message('Message; default the seed §6.3 payload as JSON', 20_000)),
    },
    { additionalProperties: false },
  ),
);

export const DatabaseActionConfig = component(
  'DatabaseActionConfig',
  Type.Object(
    {
      connection_url: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          pattern: '^postgres(ql)?://',
          description: `PostgreSQL connection URL (\`postgres://user:password@host:5432/db\`); the host passes the private-target rules. Its password is a secret: answered masked. ${SECRET_NOTE}`,
        }),
      ),
      table: Type.String({
        pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?$',
        description:
          'Table (optionally `schema.table`) receiving one row per event `(id bigserial, event_id text, event_type text, payload jsonb, created_at timestamptz)`; created if absent',
      }),
    },
    { additionalProperties: false },
  ),
);

export const ACTION_CONFIG_SCHEMAS = {
  webhook: WebhookActionConfig,
  slack: SlackActionConfig,
  email: EmailActionConfig,
  sms: SmsActionConfig,
  lambda: LambdaActionConfig,
  sns: SnsActionConfig,
  teams: TeamsActionConfig,
  discord: DiscordActionConfig,
  database: DatabaseActionConfig,
} as const satisfies Record<ActionType, TSchema>;

export type ActionConfigs = { [K in ActionType]: Static<(typeof ACTION_CONFIG_SCHEMAS)[K]> };

/** The action of one type as sent and answered: `{type, config}`. */
function actionOf<K extends ActionType>(type: K) {
  const name = `${type[0]?.toUpperCase()}${type.slice(1)}Action`;
  return component(
    name,
    Type.Object(
      { type: Type.Literal(type), config: ACTION_CONFIG_SCHEMAS[type] },
      { additionalProperties: false },
    ),
  );
}

const ACTION_SCHEMAS = ACTION_TYPES.map((type) => actionOf(type));

export type WorkflowActionInput = { [K in ActionType]: { type: K; config: ActionConfigs[K] } }[ActionType];

/**
 * Any action: `oneOf` the nine with an OpenAPI `discriminator` on `type` (ajv validates it the same
 * way, so only the named type's schema reports errors).
 */
export const WorkflowAction = component(
  'WorkflowAction',
  Type.Unsafe<WorkflowActionInput>({
    type: 'object',
    oneOf: ACTION_SCHEMAS,
    discriminator: { propertyName: 'type' },
    description: `An action: \`type\` is one of ${ACTION_TYPES.map((t) => `\`${t}\``).join(', ')}; \`config\` is that type's.`,
  }),
);
