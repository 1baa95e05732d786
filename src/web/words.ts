// The pages' counted words ("1 reply", "2 replies"), by the plural rules of the pages' language
// (Intl.PluralRules: one, few, many, other... as CLDR has them), never a trailing s. The pages
// are written in English; another language is another table here, with that language's
// categories, and its numbers grouped its way (Intl.NumberFormat).

/** The language of the pages' own words (a status keeps its own `lang`). */
export const PAGES_LANGUAGE = "en";

type Forms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };
type Word = "reply" | "boost" | "favourite" | "vote" | "post" | "follower" | "following" | "user";

const WORDS: Record<string, Record<Word, Forms>> = {
  en: {
    reply: { one: "reply", other: "replies" },
    boost: { one: "boost", other: "boosts" },
    favourite: { one: "favourite", other: "favourites" },
    vote: { one: "vote", other: "votes" },
    post: { one: "post", other: "posts" },
    follower: { one: "follower", other: "followers" },
    following: { other: "following" },
    user: { one: "user", other: "users" },
  },
};

const rules = new Map<string, { plural: Intl.PluralRules; number: Intl.NumberFormat }>();

/** `n` and the word's form for it in `lang` (the pages' language unless another has its words here). */
export function counted(n: number, word: Word, lang = PAGES_LANGUAGE): string {
  const language = WORDS[lang] ? lang : PAGES_LANGUAGE;
  let r = rules.get(language);
  if (!r) rules.set(language, (r = { plural: new Intl.PluralRules(language), number: new Intl.NumberFormat(language) }));
  const forms = (WORDS[language] as Record<Word, Forms>)[word];
  return `${r.number.format(n)} ${forms[r.plural.select(n)] ?? forms.other}`;
}
