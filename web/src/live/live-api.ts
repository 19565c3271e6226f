/**
 * The typed API client seen with the operations of `stream-types.ts` too: the same client (same
 * auth middleware, same token refresh), only typed for paths the generated schema does not list yet.
 */
import type { Client } from 'openapi-fetch';
import { api } from '../api/client.ts';
import type { LivePaths } from './stream-types.ts';

export const liveApi = api as unknown as Client<LivePaths>;
