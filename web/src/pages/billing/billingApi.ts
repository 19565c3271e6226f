/**
 * The calls of the plan-and-usage page and the queries over them. A plan change writes the new
 * subscription into the cache and invalidates `['billing']`: the usage's limits are the new plan's.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';

const INVOICES_PAGE = 12;

export const billingKeys = {
  all: ['billing'] as const,
  current: ['billing', 'current'] as const,
  plans: ['billing', 'plans'] as const,
  usage: ['billing', 'usage'] as const,
  invoices: (offset: number) => ['billing', 'invoices', offset] as const,
};

export function useSubscription() {
  return useQuery({
    queryKey: billingKeys.current,
    queryFn: ({ signal }) => answerOf(api.GET('/api/v1/subscriptions/current', { signal })),
  });
}

export function usePlans() {
  return useQuery({
    queryKey: billingKeys.plans,
    queryFn: ({ signal }) =>
      answerOf(api.GET('/api/v1/subscriptions/plans', { params: { query: { limit: 200 } }, signal })),
  });
}

export function useUsage() {
  return useQuery({
    queryKey: billingKeys.usage,
    queryFn: ({ signal }) => answerOf(api.GET('/api/v1/subscriptions/usage', { signal })),
  });
}

export function useInvoices(offset: number) {
  return useQuery({
    queryKey: billingKeys.invoices(offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/subscriptions/invoices', {
          params: { query: { offset, limit: INVOICES_PAGE } },
          signal,
        }),
      ),
  });
}

type PlanChange = operations['changePlan']['requestBody']['content']['application/json'];

export function changePlan(plan: PlanChange['plan']) {
  return api.PUT('/api/v1/subscriptions/current', { body: { plan } });
}
