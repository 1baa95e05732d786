import type { AccountRow } from "../../db/schema.ts";
import type { AccountView } from "../../models/views.ts";

type Moved = { movedTo?: AccountRow };

/**
 * Accounts made what presenters show (AccountView): each one that moved gets the account it
 * moved to, those of the whole batch read with one call of `load`. A batch where nobody moved,
 * nearly every one, costs nothing more: no query, no allocation.
 */
export function withMovedTo(rows: AccountRow[], load: (ids: number[]) => AccountRow[]): AccountView[] {
  let targets: number[] | undefined;
  for (const row of rows) if (row.movedToAccountId !== null) (targets ??= []).push(row.movedToAccountId);
  if (targets) {
    const byId = new Map(load(targets).map((a) => [a.id, a]));
    for (const row of rows) {
      const target = row.movedToAccountId === null ? undefined : byId.get(row.movedToAccountId);
      if (target) (row as Moved).movedTo = target;
    }
  }
  return rows as AccountView[];
}

/** The same for one account. */
export function oneWithMovedTo(row: AccountRow, find: (id: number) => AccountRow | undefined): AccountView {
  if (row.movedToAccountId !== null) {
    const target = find(row.movedToAccountId);
    if (target) (row as Moved).movedTo = target;
  }
  return row as AccountView;
}

/** withMovedTo, with `load` through the database port. */
export async function withMovedToAsync(rows: AccountRow[], load: (ids: number[]) => Promise<AccountRow[]>): Promise<AccountView[]> {
  let targets: number[] | undefined;
  for (const row of rows) if (row.movedToAccountId !== null) (targets ??= []).push(row.movedToAccountId);
  if (!targets) return rows as AccountView[];
  const found = await load(targets);
  return withMovedTo(rows, () => found);
}

/** oneWithMovedTo, with `find` through the database port. */
export async function oneWithMovedToAsync(row: AccountRow, find: (id: number) => Promise<AccountRow | undefined>): Promise<AccountView> {
  if (row.movedToAccountId === null) return row as AccountView;
  const target = await find(row.movedToAccountId);
  return oneWithMovedTo(row, () => target);
}
