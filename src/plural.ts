// A count with its noun in the right number, for every message built from a size or a limit:
// plural(1, 'character') is "1 character", plural(3, 'entry', 'entries') is "3 entries".
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}

/** "at most 3 are allowed", "at most 1 is allowed". */
export function atMostAllowed(n: number): string {
  return `at most ${n} ${n === 1 ? 'is' : 'are'} allowed`;
}
