// A computer id written as text (the pins file, POST /pins/<id>/reset, cc-mcp pin-reset): the same ids a
// hello may carry (hello.computerId: a safe integer >= 0, up to 16 digits), so every id the bridge pins
// can be written, read back at the next start and reset.
const DIGITS = /^\d{1,16}$/;

/** The id `text` names, or null when it is not a whole number >= 0 within the safe integers. */
export function parseComputerId(text: string): number | null {
  if (!DIGITS.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}
