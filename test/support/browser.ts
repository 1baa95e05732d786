import type { HtmlForm } from "./html.ts";
import { Client, type RequestOptions, type Res } from "./http.ts";

/**
 * The HTML pages driven as a browser drives them: it keeps the cookies it is sent and posts
 * forms with the page's Origin. Cookie paths are ignored: everything it visits is under /oauth.
 */
export class BrowserSession {
  readonly cookies = new Map<string, string>();
  private http: Client;

  constructor(public base: string) {
    this.http = new Client(base);
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async get(path: string, options: RequestOptions = {}): Promise<Res> {
    return this.keep(await this.http.get(path, { ...options, headers: this.headers(options.headers) }));
  }

  async post(path: string, options: RequestOptions = {}): Promise<Res> {
    return this.keep(await this.http.post(path, { ...options, headers: { origin: new URL(this.base).origin, ...this.headers(options.headers) } }));
  }

  /** Submits a form of the last page, with the fields a user filled in (or a button's name and value). */
  submit(form: HtmlForm, fields: Record<string, string> = {}): Promise<Res> {
    return this.post(form.action, { form: { ...form.fields, ...fields } });
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.cookies.size > 0 ? { cookie: this.cookieHeader, ...extra } : { ...extra };
  }

  private keep(res: Res): Res {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, pair!.slice(eq + 1).trim());
    }
    return res;
  }
}
