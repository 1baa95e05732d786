import { LIMITS } from "../../limits.ts";
import { graphemeLength } from "../../text/format.ts";

/** A poll as a client asks for it (POST and PUT /api/v1/statuses). */
export interface PollInput {
  options: string[];
  expiresIn?: number;
  multiple?: boolean;
  hideTotals?: boolean;
}

/** Poll checks in Mastodon's order, grouped per attribute ("Choices", "Deadline"). */
export function pollErrors(poll: PollInput): string[] {
  const groups = new Map<string, string[]>();
  const add = (attribute: string, message: string) => (groups.get(attribute) ?? groups.set(attribute, []).get(attribute)!).push(message);
  const options = poll.options;
  if (options.length === 0) add("Choices", "can't be blank");
  if (poll.expiresIn === undefined) add("Deadline", "can't be blank");
  if (options.length < 2) add("Choices", "must have more than one item");
  if (options.length > LIMITS.pollOptions) add("Choices", `can't contain more than ${LIMITS.pollOptions} items`);
  if (options.some((o) => graphemeLength(o) > LIMITS.pollOptionCharacters)) add("Choices", `cannot be longer than ${LIMITS.pollOptionCharacters} characters each`);
  if (new Set(options).size !== options.length) add("Choices", "contain duplicate items");
  if (poll.expiresIn === undefined || poll.expiresIn > LIMITS.pollMaxExpiration) add("Deadline", "is too far into the future");
  else if (poll.expiresIn < LIMITS.pollMinExpiration) add("Deadline", "is too soon");
  return [...groups].flatMap(([attribute, messages]) => messages.map((m) => `${attribute} ${m}`));
}
