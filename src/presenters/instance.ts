import type { InstanceRuleRow } from "../db/schema.ts";
import type { WeekActivity } from "../models/views.ts";

/** REST::RuleSerializer (4.3: with its hint). */
export function serializeRule(rule: InstanceRuleRow) {
  return { id: String(rule.id), text: rule.text, hint: rule.hint };
}

/** One week of Api::V1::Instances::ActivityController: every value a string, the week in UNIX seconds. */
export function serializeWeek(w: WeekActivity) {
  return { week: String(w.week / 1000), statuses: String(w.statuses), logins: String(w.logins), registrations: String(w.registrations) };
}
