export interface Res<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  json?: unknown;
  form?: Record<string, string | string[]> | [string, string][];
  multipart?: FormData;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /** Overrides the client's token; null sends none. */
  token?: string | null;
  redirect?: RequestRedirect;
}

function formBody(form: NonNullable<RequestOptions["form"]>): URLSearchParams {
  const params = new URLSearchParams();
  const entries = Array.isArray(form) ? form : Object.entries(form);
  for (const [k, v] of entries) {
    if (Array.isArray(v)) for (const item of v) params.append(k, item);
    else params.append(k, v);
  }
  return params;
}

/** A thin HTTP client for tests: real requests, parsed JSON when the server sends JSON. */
export class Client {
  constructor(
    public base: string,
    public token?: string,
  ) {}

  withToken(token: string | undefined): Client {
    return new Client(this.base, token);
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Res<T>> {
    const url = new URL(path, this.base);
    if (options.query) for (const [k, v] of Object.entries(options.query)) for (const item of [v].flat()) url.searchParams.append(k, item);
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? this.token : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    } else if (options.form) {
      body = formBody(options.form);
    } else if (options.multipart) {
      body = options.multipart;
    }
    const response = await fetch(url, { method, headers, body, redirect: options.redirect ?? "manual" });
    const text = await response.text();
    const type = response.headers.get("content-type") ?? "";
    let parsed: unknown = text;
    if (type.includes("json") && text !== "") parsed = JSON.parse(text);
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("GET", path, options);
  }
  post<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("POST", path, options);
  }
  put<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("PUT", path, options);
  }
  patch<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("PATCH", path, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("DELETE", path, options);
  }
}
