/**
 * The `sns` action (contract §6): publishes to the topic through the AWS SDK with the action's
 * own credentials. The message is the `message` template rendered as plain text, or the seed
 * §6.3 payload as JSON; `subject` (shown by e-mail subscriptions) only when configured.
 */
import { createHash } from 'node:crypto';
import { PublishCommand, type PublishCommandInput, SNSClient } from '@aws-sdk/client-sns';
import type { ActionConfigs } from '../action-configs.schemas.ts';
import { renderTemplate, type TemplateContext } from '../templates.ts';
import type { ActionExecutor } from './action.ts';
import { awsAttempt } from './aws-outcome.ts';

/** SNS refuses a subject with a line break or longer than 100 characters. */
const SUBJECT_MAX = 100;

export const snsAction: ActionExecutor<ActionConfigs['sns']> = {
  execute(config, context, runtime) {
    // Rendered before the attempt: a template past its bounds (TemplateBudgetError) is the
    // template's failure for the worker to record, not an error of the call to AWS.
    const input = publishInput(config, context);
    return awsAttempt('SNS', config, runtime, async (options, abortSignal) => {
      const client = new SNSClient(options);
      try {
        const output = await client.send(new PublishCommand(input), { abortSignal });
        return {
          statusCode: output.$metadata.httpStatusCode ?? null,
          excerpt: { MessageId: output.MessageId, SequenceNumber: output.SequenceNumber },
        };
      } finally {
        client.destroy();
      }
    });
  },
};

export function publishInput(config: ActionConfigs['sns'], context: TemplateContext): PublishCommandInput {
  const input: PublishCommandInput = {
    TopicArn: config.topic_arn,
    Message:
      config.message === undefined ? context.payload_json : renderTemplate(config.message, context, 'text'),
  };
  if (config.subject !== undefined) {
    const subject = renderTemplate(config.subject, context, 'text')
      .replace(/\s*[\r\n]+\s*/g, ' ')
      .trim()
      .slice(0, SUBJECT_MAX);
    if (subject !== '') input.Subject = subject;
  }
  if (config.topic_arn.endsWith('.fifo')) {
    // FIFO topics require a group (order is kept per device) and deduplicate by id: a retried
    // attempt of the same workflow for the same event is published once.
    input.MessageGroupId = context.device.id;
    input.MessageDeduplicationId = createHash('sha256')
      .update(`${context.workflow.id}\n${context.event_id}`)
      .digest('hex');
  }
  return input;
}
