import { ApiError } from "../errors.ts";
import type { CustomFilterRow } from "../db/schema.ts";
import type { FilterService } from "./filters.ts";
import type { KeywordRow } from "../models/views.ts";

export interface V1FilterInput {
  phrase?: string;
  context?: string[];
  irreversible?: boolean;
  wholeWord?: boolean;
  /** Seconds from now; null clears the expiry. */
  expiresIn?: number | null;
}

export interface V1Filter {
  filter: CustomFilterRow;
  keyword: KeywordRow;
}

/**
 * The deprecated v1 view of filters that older clients still use: one "filter" per keyword,
 * with the owning filter's context, expiry and action. Writing through it may not change
 * what other keywords share.
 */
export class V1FilterService {
  constructor(private filters: FilterService) {}

  async list(accountId: number): Promise<V1Filter[]> {
    return (await this.filters.list(accountId)).flatMap(({ filter, keywords }) => keywords.map((keyword) => ({ filter, keyword })));
  }

  async get(accountId: number, keywordId: number | null): Promise<V1Filter> {
    const keyword = await this.filters.getKeyword(accountId, keywordId);
    return { filter: (await this.filters.get(accountId, keyword.filterId)).filter, keyword };
  }

  async create(accountId: number, input: V1FilterInput): Promise<V1Filter> {
    const created = await this.filters.create(accountId, {
      title: input.phrase,
      context: input.context,
      action: input.irreversible ? "hide" : "warn",
      expiresIn: input.expiresIn,
      keywords: [{ keyword: input.phrase, wholeWord: input.wholeWord }],
    });
    const keyword = created.keywords[0];
    // A blank phrase is refused by the title rule before this point.
    if (!keyword) throw new ApiError(422, "Validation failed: Keyword can't be blank");
    return { filter: created.filter, keyword };
  }

  async update(accountId: number, keywordId: number | null, input: V1FilterInput): Promise<V1Filter> {
    const { filter, keyword } = await this.get(accountId, keywordId);
    const context = input.context === undefined ? undefined : [...new Set(input.context)];
    const action = input.irreversible === undefined ? undefined : input.irreversible ? "hide" : "warn";
    const filterChanges = {
      ...(input.phrase !== undefined && input.phrase !== filter.title ? { title: input.phrase } : {}),
      ...(context !== undefined && JSON.stringify(context) !== filter.context ? { context } : {}),
      ...(action !== undefined && action !== filter.action ? { action } : {}),
      // An expiry is relative to now, so giving one always changes it.
      ...(input.expiresIn !== undefined ? { expiresIn: input.expiresIn } : {}),
    };
    if (Object.keys(filterChanges).length > 0 && (await this.filters.get(accountId, filter.id)).keywords.length > 1) {
      throw new ApiError(
        422,
        "These parameters cannot be changed from this application because they apply to more than one filter keyword. Use a more recent application or the web interface.",
      );
    }
    const updated = await this.filters.update(accountId, filter.id, {
      ...filterChanges,
      keywords: [{ id: keyword.id, keyword: input.phrase, wholeWord: input.wholeWord }],
    });
    return { filter: updated.filter, keyword: updated.keywords.find((k) => k.id === keyword.id) ?? keyword };
  }

  async remove(accountId: number, keywordId: number | null) {
    await this.filters.removeKeyword(accountId, keywordId);
  }
}
