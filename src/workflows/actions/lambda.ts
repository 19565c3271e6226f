/**
 * The `lambda` action (contract §6): invokes the function asynchronously (`InvocationType:
 * Event`, Lambda answers 202 once the event is queued) with the seed §6.3 payload as its event,
 * through the AWS SDK and the action's own credentials.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { ActionConfigs } from '../action-configs.schemas.ts';
import type { ActionExecutor } from './action.ts';
import { awsAttempt } from './aws-outcome.ts';

export const lambdaAction: ActionExecutor<ActionConfigs['lambda']> = {
  execute(config, context, runtime) {
    return awsAttempt('Lambda', config, runtime, async (options, abortSignal) => {
      const client = new LambdaClient(options);
      try {
        const output = await client.send(
          new InvokeCommand({
            FunctionName: config.function_name,
            InvocationType: 'Event',
            Payload: Buffer.from(context.payload_json, 'utf8'),
          }),
          { abortSignal },
        );
        return {
          statusCode: output.$metadata.httpStatusCode ?? null,
          excerpt: { StatusCode: output.StatusCode },
        };
      } finally {
        client.destroy();
      }
    });
  },
};
