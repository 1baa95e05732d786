/**
 * Language codes a status may carry: ISO 639-1, and the ISO 639-3 codes Mastodon also
 * accepts (app/helpers/languages_helper.rb) for languages without a two-letter code.
 */
const ISO_639_1 =
  "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu";
const ISO_639_3 = "ast chr ckb cnr csb jbo kab kmr ldn lfn moh nds pdc sco sma smj szl tok vai xal zba zgh";

const CODES = new Set([...ISO_639_1.split(" "), ...ISO_639_3.split(" ")]);

/**
 * A code as Mastodon stores it: `en`, also from `en-US` or `EN_us` (the region is dropped
 * when only the base language is known). Null when it is no language code at all.
 */
export function normalizeLanguage(value: string): string | null {
  const code = value.trim().toLowerCase().replace(/_/g, "-");
  if (CODES.has(code)) return code;
  const base = code.split("-")[0] ?? "";
  return /^[a-z]{2,3}-[a-z0-9]{2,8}$/.test(code) && CODES.has(base) ? base : null;
}

/** Every code a status may carry, for a choice of language (the settings' posting language). */
export const LANGUAGE_CODES: readonly string[] = [...CODES];
