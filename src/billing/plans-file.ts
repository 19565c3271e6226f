/** Reads PLANS_FILE at start (contract §0); problems are reported with the other config errors (exit 2). */
import fs from 'node:fs';
import { DEFAULT_PLANS, type Plan, validatePlans } from './plans.ts';

export function loadPlans(file: string | undefined, defaultPlan: string, problems: string[]): Plan[] {
  let plans: Plan[] = [...DEFAULT_PLANS];
  if (file !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      problems.push(`PLANS_FILE ${file} could not be read as JSON: ${(error as Error).message}`);
      return plans;
    }
    const result = validatePlans(parsed);
    if ('problems' in result) {
      for (const problem of result.problems) problems.push(`PLANS_FILE ${file}: ${problem}`);
      return plans;
    }
    plans = result.plans;
  }
  if (!plans.some((p) => p.id === defaultPlan)) {
    problems.push(
      `DEFAULT_PLAN "${defaultPlan}" is not one of the plans (${plans.map((p) => p.id).join(', ')})`,
    );
  }
  return plans;
}
