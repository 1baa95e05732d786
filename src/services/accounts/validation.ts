import { ApiError } from "../../errors.ts";

/**
 * Mastodon's ValidationErrorFormatter: `error` is Rails' "Validation failed: <full messages>",
 * `details` maps each attribute to [{error: "ERR_<KIND>", description}], in validation order.
 */
export type ErrorKind = "BLANK" | "TAKEN" | "INVALID" | "TOO_LONG" | "TOO_SHORT" | "ACCEPTED" | "RESERVED" | "INCLUSION";

interface FieldError {
  attribute: string;
  human: string;
  kind: ErrorKind;
  description: string;
}

export class ValidationErrors {
  private errors: FieldError[] = [];

  add(attribute: string, human: string, kind: ErrorKind, description: string) {
    if (this.errors.some((e) => e.attribute === attribute && e.description === description)) return;
    this.errors.push({ attribute, human, kind, description });
  }

  get empty() {
    return this.errors.length === 0;
  }

  has(attribute: string) {
    return this.errors.some((e) => e.attribute === attribute);
  }

  toError(withDetails = true): ApiError {
    const message = `Validation failed: ${this.errors.map((e) => `${e.human} ${e.description}`).join(", ")}`;
    if (!withDetails) return new ApiError(422, message);
    const details: Record<string, { error: string; description: string }[]> = {};
    for (const e of this.errors) (details[e.attribute] ??= []).push({ error: `ERR_${e.kind}`, description: e.description });
    return new ApiError(422, message, { details });
  }

  throwIfAny(withDetails = true) {
    if (!this.empty) throw this.toError(withDetails);
  }
}
