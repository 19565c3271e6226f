/**
 * The optional rules of a geofence (dwell, exit buffer, accuracy; contract §4.5) as number fields,
 * an empty one meaning the rule is off. Each input carries the rule's name: the form reads its
 * validity on submit, since text that is not a number reads as '' and would switch the rule off.
 */

import { TextField } from './GeofenceFormField.tsx';
import type { FieldErrors, RuleName, RuleTexts } from './geofenceFormState.ts';
import { RULES } from './geofenceFormState.ts';

export function GeofenceRulesFields({
  rules,
  errors,
  onRule,
}: {
  rules: RuleTexts;
  errors: FieldErrors;
  onRule: (name: RuleName, text: string) => void;
}) {
  return (
    <fieldset className="rules">
      <legend>Dwell, exit buffer and accuracy</legend>
      <p className="hint">Optional rules; leave a field empty to turn its rule off.</p>
      {RULES.map((rule) => (
        <TextField
          key={rule.name}
          label={rule.label}
          hint={`${rule.min.toLocaleString()}–${rule.max.toLocaleString()} ${rule.unit}. ${rule.off}`}
          error={errors[rule.name]}
        >
          {(attrs) => (
            <input
              {...attrs}
              name={rule.name}
              type="number"
              inputMode={rule.integer ? 'numeric' : 'decimal'}
              min={rule.min}
              max={rule.max}
              step={rule.integer ? 1 : 'any'}
              value={rules[rule.name]}
              placeholder="off"
              onChange={(e) => onRule(rule.name, e.target.value)}
            />
          )}
        </TextField>
      ))}
    </fieldset>
  );
}
