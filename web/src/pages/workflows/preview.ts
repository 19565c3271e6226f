/**
 * The template preview renders with the server's own modules, not a copy: the Mustache engine and
 * escaping of src/workflows/templates.ts, the sample event of a test run (sample-event.ts) and the
 * context a run is given (run-context.ts). So the preview is what POST /workflows/{id}/test sends,
 * except for the time, which is now rather than the moment of the test.
 */
import { eventContext } from '../../../../src/workflows/run-context.ts';
import { SAMPLE_DEVICE, sampleEvent } from '../../../../src/workflows/sample-event.ts';
import {
  defaultMessage,
  defaultSubject,
  ESCAPES,
  type Escaping,
  renderTemplate,
  TEMPLATE_VARIABLES,
  TemplateBudgetError,
  type TemplateContext,
  templateProblem,
  unknownVariables,
} from '../../../../src/workflows/templates.ts';

export type { Escaping, TemplateContext };
export { TEMPLATE_VARIABLES, templateProblem };

export interface PreviewGeofence {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  bbox: readonly number[];
}

/** Ids of the preview's own (never stored) sample event. */
const PREVIEW_IDS = { id: 'preview', locationId: 'preview' };

export function sampleContext(
  geofence: PreviewGeofence,
  eventTypes: readonly ('enter' | 'exit' | 'dwell')[],
  workflow: { id: string; name: string },
  now: Date,
): TemplateContext {
  const event = sampleEvent(
    { workspaceId: '', geofenceId: geofence.id, eventTypes },
    geofence,
    now,
    PREVIEW_IDS,
  );
  return eventContext(event, SAMPLE_DEVICE, workflow, 'preview', true);
}

type Default = (context: TemplateContext) => string;

/** What an action sends for a template left empty, where the server builds it from this module. */
const DEFAULTS: Record<string, Default> = {
  'slack.message': (context) => ESCAPES.slack(defaultMessage(context)),
  'discord.message': defaultMessage,
  'sms.body': defaultMessage,
  'email.subject': defaultSubject,
  'sns.message': (context) => context.payload_json,
};

/** The rendered text, and the variables in it that are none of the documented ones (render empty). */
export type Preview = { text: string; unknown: string[] } | { problem: string } | { described: true };

/**
 * What the action sends for this field: the rendered template, or its default when left empty.
 * A template past its rendering bounds (contract §6) shows the message an attempt would fail
 * with, as a problem of the field; the render stops at the bound, so the tab never freezes.
 */
export function previewText(
  actionType: string,
  field: string,
  template: string,
  context: TemplateContext,
  escaping: Escaping,
): Preview {
  if (template === '') {
    const fallback = DEFAULTS[`${actionType}.${field}`];
    return fallback ? { text: fallback(context), unknown: [] } : { described: true };
  }
  const problem = templateProblem(template);
  if (problem) return { problem };
  try {
    return { text: renderTemplate(template, context, escaping), unknown: unknownVariables(template) };
  } catch (error) {
    if (error instanceof TemplateBudgetError) return { problem: error.message };
    throw error;
  }
}
