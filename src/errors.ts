/**
 * Errors carry the HTTP status and body Mastodon answers with, so a service can refuse with
 * exactly the words a client expects and the route layer only renders them.
 */

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
    public extra: Record<string, unknown> = {},
    public headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get body(): Record<string, unknown> {
    return { error: this.message, ...this.extra };
  }
}

/**
 * A failure of the set-up that the operator fixes (a damaged key file...): the command line
 * prints its message as one line, without a stack trace.
 */
export class SetupError extends Error {}

/**
 * Work only the main thread does (fetching from other servers, a thread's fill), asked of a
 * serving thread (WEB_THREADS > 1), whose connection only reads: the request is passed to the
 * main thread, which answers it whole (src/http/read-routes.ts, NEEDS_OWNER).
 */
export class OwnersWork extends Error {}

export const notFound = () => new ApiError(404, "Record not found");
export const forbidden = (message = "This action is not allowed") => new ApiError(403, message);
export const unprocessable = (message: string, extra: Record<string, unknown> = {}) => new ApiError(422, message, extra);
export const badRequest = (message: string) => new ApiError(400, message);

/** Mastodon's ActiveRecord::RecordInvalid rendering. */
export const validationFailed = (...messages: string[]) => unprocessable(`Validation failed: ${messages.join(", ")}`);

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}
