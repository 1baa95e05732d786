/**
 * CSV as Mastodon writes and reads it (Ruby's CSV: RFC 4180, comma-separated, fields quoted
 * when they hold a comma, a quote or a line break, quotes doubled). Read as Mastodon's import
 * does: blank lines skipped, a UTF-8 byte order mark dropped, CRLF or LF.
 */

export class CsvError extends Error {}

/** One record as a line of a file, with its line break. */
export function csvLine(fields: readonly (string | boolean | null | undefined)[]): string {
  return `${fields.map((f) => quote(f === null || f === undefined ? "" : String(f))).join(",")}\n`;
}

function quote(field: string): string {
  return /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

export interface CsvRecord {
  /** The line of the file the record starts on (1-based). */
  line: number;
  fields: string[];
}

/**
 * The records of a file; throws CsvError for what is no CSV: bytes that are not UTF-8, NUL
 * bytes (a binary file), a quote left open, text after a closing quote.
 */
export function parseCsv(bytes: Uint8Array): CsvRecord[] {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new CsvError("it is not UTF-8 text");
  }
  if (text.includes("\0")) throw new CsvError("it is not text");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = "";
  let line = 1;
  let start = 1;
  let quoted = false;
  let afterQuote = false;
  let any = false;
  const endRecord = () => {
    fields.push(field);
    // A blank line is no record (Ruby's skip_blanks).
    if (!(fields.length === 1 && fields[0] === "" && !any)) records.push({ line: start, fields });
    fields = [];
    field = "";
    any = false;
    afterQuote = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
          afterQuote = true;
        }
      } else {
        if (c === "\n") line++;
        field += c;
      }
      continue;
    }
    if (c === ",") {
      fields.push(field);
      field = "";
      any = true;
      afterQuote = false;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endRecord();
      line++;
      start = line;
    } else if (c === '"') {
      if (field !== "" || afterQuote) throw new CsvError(`line ${line}: a quote in the middle of a field`);
      quoted = true;
      any = true;
    } else {
      if (afterQuote) throw new CsvError(`line ${line}: text after a closing quote`);
      field += c;
    }
  }
  if (quoted) throw new CsvError(`line ${start}: a quoted field is never closed`);
  if (field !== "" || fields.length > 0 || any) endRecord();
  return records;
}
