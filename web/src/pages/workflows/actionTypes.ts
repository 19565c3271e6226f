/**
 * The form of each of the nine action types (contract §6, src/workflows/action-configs.schemas.ts):
 * which config fields it has, how each is edited, and which are secrets (answered masked, see
 * src/workflows/action-secrets.ts SECRET_FIELDS) or templates (rendered with the target's escaping).
 */
import type { Schemas } from '../../api/client.ts';

export type ActionType = Schemas['WorkflowActionRecord']['type'];

export type FieldKind =
  /** One line of text. */
  | 'text'
  /** A password input with a Show toggle; on edit it holds the API's mask until changed. */
  | 'secret'
  /** A Mustache template with variable chips and a live preview. */
  | 'template'
  /** Comma- or line-separated list, sent as an array. */
  | 'list'
  /** One of the workspace's webhooks. */
  | 'webhook';

export interface FieldSpec {
  name: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  hint?: string;
  placeholder?: string;
  /** Templates: how values are escaped (Slack's `&`, `<`, `>`, or plain text). */
  escaping?: 'slack' | 'text';
  /** Templates: a multi-line body rather than one line. */
  multiline?: boolean;
  /** Templates: what is sent when the field is left empty. */
  defaultText?: string;
  inputMode?: 'email' | 'tel' | 'url' | 'text';
}

export interface ActionTypeSpec {
  type: ActionType;
  label: string;
  fields: readonly FieldSpec[];
}

const DEFAULT_LINE = 'one line naming the device, the event and the geofence, with the point and time';

const chatFields = (service: string, escaping: 'slack' | 'text', hint: string): FieldSpec[] => [
  {
    name: 'webhook_url',
    label: `${service} webhook URL`,
    kind: 'secret',
    required: true,
    inputMode: 'url',
    hint: `${hint} Its path is a secret: stored encrypted and shown masked.`,
  },
  {
    name: 'message',
    label: 'Message',
    kind: 'template',
    required: false,
    escaping,
    multiline: true,
    defaultText: DEFAULT_LINE,
  },
];

const awsFields: FieldSpec[] = [
  { name: 'region', label: 'AWS region', kind: 'text', required: true, placeholder: 'eu-west-1' },
  {
    name: 'access_key_id',
    label: 'Access key id',
    kind: 'text',
    required: true,
    hint: 'Of an IAM user allowed to make this call.',
  },
  { name: 'secret_access_key', label: 'Secret access key', kind: 'secret', required: true },
  {
    name: 'endpoint',
    label: 'Endpoint (optional)',
    kind: 'text',
    required: false,
    inputMode: 'url',
    hint: 'Another endpoint than AWS’s own, e.g. a local emulator.',
  },
];

export const ACTION_SPECS: readonly ActionTypeSpec[] = [
  {
    type: 'slack',
    label: 'Slack message',
    fields: chatFields('Slack', 'slack', 'A Slack incoming-webhook URL.'),
  },
  {
    type: 'email',
    label: 'E-mail',
    fields: [
      {
        name: 'to',
        label: 'To',
        kind: 'list',
        required: true,
        inputMode: 'email',
        hint: 'One or more addresses, separated by commas.',
      },
      {
        name: 'subject',
        label: 'Subject',
        kind: 'template',
        required: false,
        escaping: 'text',
        defaultText: '“<device> entered|left|has stayed in <geofence>”',
      },
      {
        name: 'body',
        label: 'Body',
        kind: 'template',
        required: false,
        escaping: 'text',
        multiline: true,
        defaultText: 'a summary of the event',
      },
    ],
  },
  {
    type: 'webhook',
    label: 'Webhook delivery',
    fields: [
      {
        name: 'webhook_id',
        label: 'Webhook',
        kind: 'webhook',
        required: true,
        hint: 'The event goes to it as a normal signed delivery, whatever its own filters say.',
      },
    ],
  },
  {
    type: 'sms',
    label: 'SMS (Twilio)',
    fields: [
      {
        name: 'to',
        label: 'To',
        kind: 'text',
        required: true,
        inputMode: 'tel',
        placeholder: '+14155550123',
      },
      {
        name: 'from',
        label: 'From',
        kind: 'text',
        required: true,
        hint: 'A Twilio phone number (E.164) or a messaging service / alphanumeric id.',
      },
      { name: 'account_sid', label: 'Account SID', kind: 'text', required: true, placeholder: 'AC…' },
      { name: 'auth_token', label: 'Auth token', kind: 'secret', required: true },
      {
        name: 'body',
        label: 'Message',
        kind: 'template',
        required: false,
        escaping: 'text',
        multiline: true,
        defaultText: 'one line naming the device, the event and the geofence',
      },
      {
        name: 'api_base_url',
        label: 'API base URL (optional)',
        kind: 'text',
        required: false,
        inputMode: 'url',
        hint: 'Default https://api.twilio.com.',
      },
    ],
  },
  {
    type: 'teams',
    label: 'Microsoft Teams message',
    fields: chatFields('Teams', 'text', 'A Teams incoming-webhook URL.'),
  },
  {
    type: 'discord',
    label: 'Discord message',
    fields: chatFields('Discord', 'text', 'A Discord webhook URL.'),
  },
  {
    type: 'lambda',
    label: 'AWS Lambda',
    fields: [
      {
        name: 'function_name',
        label: 'Function name or ARN',
        kind: 'text',
        required: true,
        hint: 'Invoked asynchronously with the event payload.',
      },
      ...awsFields,
    ],
  },
  {
    type: 'sns',
    label: 'AWS SNS',
    fields: [
      {
        name: 'topic_arn',
        label: 'Topic ARN',
        kind: 'text',
        required: true,
        placeholder: 'arn:aws:sns:eu-west-1:123456789012:alerts',
      },
      ...awsFields,
      {
        name: 'subject',
        label: 'Subject (optional)',
        kind: 'template',
        required: false,
        escaping: 'text',
        defaultText: 'none',
      },
      {
        name: 'message',
        label: 'Message',
        kind: 'template',
        required: false,
        escaping: 'text',
        multiline: true,
        defaultText: 'the event payload as JSON',
      },
    ],
  },
  {
    type: 'database',
    label: 'PostgreSQL row',
    fields: [
      {
        name: 'connection_url',
        label: 'Connection URL',
        kind: 'secret',
        required: true,
        placeholder: 'postgres://user:password@host:5432/db',
        hint: 'Its password is a secret: stored encrypted and shown masked.',
      },
      {
        name: 'table',
        label: 'Table',
        kind: 'text',
        required: true,
        hint: 'Optionally schema.table; created if absent.',
      },
    ],
  },
];

export function specOf(type: ActionType): ActionTypeSpec {
  const spec = ACTION_SPECS.find((s) => s.type === type);
  if (!spec) throw new Error(`Unknown action type ${type}`);
  return spec;
}
