/**
 * How `lambda` and `sns` actions configure an AWS SDK client (contract §6, ADR 014).
 *
 * - Credentials are the action's own, and only those: the service is multi-tenant, so it must
 *   never lend its own AWS identity (environment, profile files, instance or container metadata)
 *   to a customer's action. The SDK's default chain is replaced by one that refuses, and the
 *   settings the SDK would otherwise read from the environment or ~/.aws are given explicitly.
 * - One attempt: the workflow worker owns retries, so the SDK makes exactly one request.
 * - The endpoint passes the SSRF guard like a webhook URL (unless private targets are allowed):
 *   the agents' `lookup` resolves the host with `resolvePublicAddresses` and hands the socket the
 *   checked addresses, so the IP that was checked is the IP connected to. A literal IP never
 *   reaches `lookup` (net connects to it directly), so the agents check literals themselves.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { type ClientRequestArgs, Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import {
  classifyAddress,
  ForbiddenTargetError,
  resolvePublicAddresses,
} from '../../outbound/outbound-guard.ts';
import type { ActionRuntime } from './action.ts';

/** The fields `lambda` and `sns` configs share; the secret is opened by the worker. */
export interface AwsConnection {
  region: string;
  access_key_id: string;
  secret_access_key: string;
  endpoint?: string | undefined;
}

/** Options accepted alike by `LambdaClient` and `SNSClient`. */
export interface AwsClientOptions {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  credentialDefaultProvider: () => () => Promise<never>;
  endpoint?: string;
  maxAttempts: number;
  retryMode: string;
  defaultsMode: 'standard';
  useFipsEndpoint: boolean;
  useDualstackEndpoint: boolean;
  requestHandler: NodeHttpHandler;
}

export interface AwsClientSetup {
  options: AwsClientOptions;
  /** Closes the agents' sockets; call it once the client is done (after `client.destroy()`). */
  destroy(): void;
}

const noDefaultCredentials = () => () =>
  Promise.reject(new Error('AWS actions use the credentials of their own config only'));

export function awsClientOptions(connection: AwsConnection, runtime: ActionRuntime): AwsClientSetup {
  const agentOptions = runtime.allowPrivateTargets ? {} : { lookup: guardedLookup(runtime) };
  // No keep-alive: the client lives for one attempt, its socket should not outlive it.
  const httpAgent = new HttpAgent({ keepAlive: false, ...agentOptions });
  const httpsAgent = new HttpsAgent({ keepAlive: false, ...agentOptions });
  if (!runtime.allowPrivateTargets) {
    refuseForbiddenLiterals(httpAgent, runtime);
    refuseForbiddenLiterals(httpsAgent, runtime);
  }
  const requestHandler = new NodeHttpHandler({
    httpAgent,
    httpsAgent,
    connectionTimeout: runtime.timeoutMs,
    requestTimeout: runtime.timeoutMs,
    // Without it an exceeded requestTimeout is only logged as a warning.
    throwOnRequestTimeout: true,
  });
  const options: AwsClientOptions = {
    region: connection.region,
    credentials: {
      accessKeyId: connection.access_key_id,
      secretAccessKey: connection.secret_access_key,
    },
    credentialDefaultProvider: noDefaultCredentials,
    maxAttempts: 1,
    retryMode: 'standard',
    // 'auto' would ask the instance metadata service for the region; never let the environment pick it.
    defaultsMode: 'standard',
    useFipsEndpoint: false,
    useDualstackEndpoint: false,
    requestHandler,
  };
  if (connection.endpoint !== undefined) options.endpoint = connection.endpoint;
  return {
    options,
    destroy() {
      requestHandler.destroy();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** `net` lookup through the guard: every address of the host must be public, or none is used. */
function guardedLookup(runtime: ActionRuntime): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolvePublicAddresses(hostname, runtime.lookup, runtime.classify).then(
      (addresses) => {
        const all: LookupAddress[] = addresses.map((address) => ({ address, family: isIP(address) }));
        const wanted =
          options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        const first = wanted[0];
        if (first === undefined) {
          callback(
            Object.assign(new Error(`${hostname} has no IPv${options.family} address`), {
              code: 'ENOTFOUND',
            }),
            '',
          );
        } else if (options.all === true) callback(null, wanted);
        else callback(null, first.address, first.family);
      },
      (error: Error) => callback(error, ''),
    );
  };
}

type CreateConnection = (
  options: ClientRequestArgs,
  callback?: (err: Error | null, stream: Duplex) => void,
) => Duplex | null | undefined;

/** A literal IP host skips `lookup`: refuse a non-public one before a socket is created. */
function refuseForbiddenLiterals(agent: HttpAgent, runtime: ActionRuntime): void {
  const create: CreateConnection = agent.createConnection.bind(agent);
  agent.createConnection = (options, callback) => {
    const host = String(options.host ?? options.hostname ?? '');
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (isIP(bare) !== 0) {
      const reason = (runtime.classify ?? classifyAddress)(bare);
      if (reason !== null) {
        const error = new ForbiddenTargetError(bare, bare, reason);
        // The agent's callback reports the error on the request, which the SDK then rejects with.
        process.nextTick(() => callback?.(error, undefined as unknown as Duplex));
        return undefined;
      }
    }
    return create(options, callback);
  };
}
