// The pattern check's precise reading of runs (src/tools/pattern-chains.ts scanChains, `precise`): a group
// matched at most once is walked into, so a separator it must start or end with ends the runs beside
// it. Timings are never asserted here; measured figures are in the README and the commit message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PRECISE_CHARS_COUNTED, patternProblem } from '../../dist/tools/pattern-safety.js';
import { MAX_PRECISE_STEPS } from '../../dist/tools/pattern-chains.js';
import { runnablePattern } from '../../dist/tools/schema-pattern.js';
import { validate } from '../../dist/tools/schema.js';

// Common schema patterns the build before refused (each for three or more runs in a row: the group's
// characters counted as one run with the repetitions beside it), with a value each must take and one it
// must refuse. Each is linear: the worst of crafted 100,000-character strings took under a few ms.
const COMMON = [
  ['^-?\\d+(\\.\\d+)?([eE][+-]?\\d+)?$', '-12.5e+3', '12.5e'],
  ['^-?(?:0|[1-9]\\d*)(?:\\.\\d+)?(?:[eE][+-]?\\d+)?$', '0.25E-7', '01'],
  ['^[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?$', '+.5e3', '1.2.3'],
  ['^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$', '1.20.3-rc.1+build.5', '1.2'],
  ['^v?(\\d+)\\.(\\d+)\\.(\\d+)(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$', 'v1.2.3-beta', '1.2.3+'],
  ['^(\\d+)(\\.\\d+)?(\\.\\d+)?$', '1.21.4', '1..2'],
  ['^[a-z]+(_[a-z]+)*(\\.[a-z]+)?$', 'turtle_fuel.lua', 'turtle__fuel'],
  ['^https?://[\\w.-]+(?::\\d+)?(?:/[\\w./?%&=-]*)?$', 'http://localhost:3000/mcp?x=1', 'http://host:port'],
  ['^wss?://[\\w.-]+(:\\d+)?(/[\\w./-]*)?$', 'ws://127.0.0.1:3001/link', 'ws://host/a?b'],
];

/** The pattern is accepted and run: \`good\` passes a schema holding it, \`bad\` gets the pattern error. */
function takenAndRun(pattern, good, bad) {
  new RegExp(pattern, 'u');
  assert.equal(patternProblem(pattern), null);
  assert.ok(runnablePattern(pattern) instanceof RegExp);
  const schema = { type: 'object', properties: { v: { type: 'string', pattern } } };
  assert.equal(validate({ v: good }, schema), null);
  assert.match(validate({ v: bad }, schema), /^argument "v" must match the pattern/);
}

for (const [pattern, good, bad] of COMMON) {
  test(`bug: the common pattern ${pattern} was refused (a run counted through a group that a separator begins); now it is taken and run`, () => {
    takenAndRun(pattern, good, bad);
  });
}

// measured on this machine, build before: 1.8 s and 2.3 s on 1,000 digits, 31 s and 17 s on 2,000 (length^3)
test('bug: a required group ending an unanchored pattern was not counted (\\w*(?:(?:\\d+b[ab])?\\w\\s)+|\\W{2,}! took 1.8 s on 1,000 digits, \\w*(?:\\d+b|c) 2.3 s); now its first copy is read, and the run into it refused', () => {
  assert.match(patternProblem('\\w*(?:(?:\\d+b[ab])?\\w\\s)+|\\W{2,}!'), /^"\\w\*" and "\(\?:\(\?:\\d\+b\[ab\]\)\?\\w\\s\)\+" repeat the same characters .*, in an unanchored pattern .* length\^3 splits/);
  assert.match(patternProblem('\\w*(?:\\d+b|c)'), /^"\\w\*" and "\(\?:\\d\+b\|c\)" repeat the same characters .* length\^3 splits/);
  assert.equal(typeof runnablePattern('\\w*(?:\\d+b|c)'), 'string');
  // what cannot fail after the run stays uncounted: an optional group, a last item that is a set, a
  // repeated group whose first copy ends in a run (a copy more failing ends the match)
  for (const p of ['\\w+(\\s\\w+)*', '\\w+(\\s\\w+)+', '-{2}[^a]*(?:[a-c])+?', '.*foo.*']) {
    new RegExp(p, 'u');
    assert.equal(patternProblem(p), null, p);
  }
});

test('the precise reading takes a pattern only when it leaves no two runs chained anywhere; otherwise the message is the one before', () => {
  // \d+ and \d* still share the digits across the optional group (length^2 on its own, as a chain of two):
  // refused as before, with the same message
  assert.match(patternProblem('^\\d+(?:\\.\\d+)?\\d*x$'), /^"\\d\+" and "\(\?:\\\.\\d\+\)\?" and "\\d\*" repeat the same characters .* length\^3 splits/);
  // found by comparing the builds over generated patterns: each would have been taken with a chain of two
  // left (length^2: 0.4 to 5 s on 10,000 to 100,000 characters)
  // and ^(?:(\W+?c{1,10})*){2}.\s+b (590 ms on 10,000 characters: the second copy of the group takes over
  // copies of the first, which can end where a copy begins)
  for (const p of ['^(?:(\\W+?c{1,10})*){2}.\\s+b', '^(?:\\d(?=a)|b+b+[ab]\\d|\\bbc){1,10}$', '(b{11}|-)+ab|(?:\\s|a*b){2}b?$', '\\w{3,10}\\W{11}[a-c]+?|\\s{2,}(?:[ab]{11}\\W{11})?a{11}|\\sb']) {
    new RegExp(p, 'u');
    assert.equal(typeof patternProblem(p), 'string', p);
  }
  // and only when the ways of bounded repetitions beside its runs stay few on 100,000 characters
  // (PRECISE_CHARS_COUNTED): each about 200 x length, 115 ms and 370 ms on 100,000 characters, as
  // ^(?:\W{1,10}|.{0,3}){2}-+$ and ^\d{1,10}x{2,}(?:\w{1,10}|[ab]){2}b, taken before and still, are
  assert.equal(PRECISE_CHARS_COUNTED, 100_000);
  for (const p of ['^(?:\\W{1,10}\\w*|.{0,3}){2}-+$', '^\\d{1,10}x{2,}(?:\\w{1,10}|(?:[ab][a-c]){2}\\d*\\s{0,3}){2}b']) {
    new RegExp(p, 'u');
    assert.match(patternProblem(p), /repeat the same characters .* length\^3 splits/, p);
  }
  for (const p of ['^(?:\\W{1,10}|.{0,3}){2}-+$', '^\\d{1,10}x{2,}(?:\\w{1,10}|[ab]){2}b']) assert.equal(patternProblem(p), null, p);
  // a separator inside a group ends the run only when every way through the group meets it
  for (const p of ['^\\d+(?:\\.|\\d*)\\d+(?:\\.\\d+)?$', '^\\w+(?:[._]\\w+|\\w*)\\w+$']) {
    new RegExp(p, 'u');
    assert.equal(typeof patternProblem(p), 'string', p);
  }
});

test('the precise reading gives up past MAX_PRECISE_STEPS (its cost grows with groups x the runs open across them), and the pattern keeps the first reading\'s answer', () => {
  assert.equal(MAX_PRECISE_STEPS, 50_000);
  const cjk = (i) => String.fromCodePoint(0x4e00 + i);
  // each optional group begins with its own character, so each [0-9]* run is alone: linear, taken when read
  // precisely (each class its own set of characters: the runs are not merged as \d's would be)
  const groups = (n) => `^\\d*${Array.from({ length: n }, (_, i) => `(?:${cjk(i)}[0-9]*)?`).join('')}$`;
  assert.equal(patternProblem(groups(100)), null);
  // 200 groups take over 50,000 steps (each group's run stays open past the groups after it, which can be skipped)
  assert.match(patternProblem(groups(200)), /^"\\d\*" and "\(\?:一\[0-9\]\*\)\?" and "\(\?:丁\[0-9\]\*\)\?" .* repeat the same characters/);
});

// Host, URL and e-mail patterns whose repeated group ends (or whose next item starts) with a separator the
// run after the group cannot take: the build before refused each (the run after the group counted as one
// more factor of the length, chained to the ones before and after it). Crafted worst cases (copies of
// "a." and "aa.", runs of one character, a '!', a line end or a space at the end; 100,000 characters):
// under 1 ms each.
const SEPARATED = [
  ['^https?://([\\w-]+\\.)+[\\w-]+(:\\d+)?(/\\S*)?$', 'https://mc.example.org:25565/map/x', 'http://localhost'],
  ['^(https?://)?([\\w-]+\\.)+[\\w-]+(/[\\w./?%&=-]*)?$', 'example.org/a?b=1', 'example.org/ a'],
  ['^(https?://)?([\\w-]+\\.)+[\\w-]+(:\\d+)?(/\\S*)?$', 'http://a-b.example.org:8080', 'http://a..b'],
  ['^[a-z0-9]+([._-][a-z0-9]+)*@[a-z0-9-]+(\\.[a-z0-9-]+)*\\.[a-z]{2,}$', 'steve.miner@mail.example.org', 'steve@example'],
  ['^[a-z0-9]+([._-][a-z0-9]+)*@[a-z0-9]+([.-][a-z0-9]+)*\\.[a-z]{2,}$', 'a_b@c-d.example.net', 'a..b@example.net'],
];

for (const [pattern, good, bad] of SEPARATED) {
  test(`bug: the common pattern ${pattern} was refused (a run after a group repeated without bound counted though a separator ends each copy or starts what follows); now it is taken and run`, () => {
    takenAndRun(pattern, good, bad);
  });
}

test('a run after a group repeated without bound is free only when the separator bounds where the group ends', () => {
  // taken: every copy ends with the '.' the run cannot take, or the '.' after the group starts what follows
  for (const p of ['^([a-z]+\\.)*[a-z]{2,}(?:/\\S*)?$', '^(\\.[a-z]+)*\\.[a-z]{2,}(?:/\\S*)?$']) assert.equal(patternProblem(p), null, p);
  // refused, each slow: the group can end anywhere in its last copy's run and the run after it can begin
  // there (an optional '.', or none: 341 ms on 10,000 characters, 5.3 s on 30,000), the run can take the
  // separator ('a.' copies: 248 ms on 10,000, 2.6 s on 30,000), a copy can end without one, or an
  // unbounded run of the same letters comes between
  for (const p of [
    '^(\\.[a-z]+)*\\.?[a-z]{2,}(?:/\\S*)?$',
    '^(\\.[a-z]+)*[a-z]{2,}(?:/\\S*)?$',
    '^([a-z]+\\.)*[a-z.]{2,}(?:/\\S*)?$',
    '^([a-z]+\\.?)*[a-z]{2,}(?:/\\S*)?$',
    '^(\\.[a-z]+)*\\.[a-z]*[a-z]{2,}(?:/\\S*)?$',
    '^([\\w-]+\\.)+[\\w.]*[\\w-]+(/\\S*)?$',
  ]) {
    new RegExp(p, 'u');
    assert.match(patternProblem(p), /repeat the same characters .* length\^[34] splits/, p);
  }
  // a lookbehind is matched from its end: the rule is not used there
  assert.equal(typeof patternProblem('(?<=^([a-z]+\\.)*[a-z]{2,}(?:/\\S*)?)$'), 'string');
});

// A bounded item before the group ((www\.)?, x?, [a-z]?) can take what the group starts with, so the
// first reading counted its few ways times length^2 (the group and the run after it) and refused for
// those ways, a refusal the precise reading never looked at. Crafted worst cases (copies of "a.", "www.",
// "x." with '!', '1', '.', '/ ' at the end; 100,000 characters): under 1.3 ms each.
const BOUNDED_BEFORE = [
  ['^(www\\.)?([a-z0-9-]+\\.)+[a-z]{2,}$', 'www.mc.example.org', 'example'],
  ['^x?([\\w-]+\\.)+[\\w-]+$', 'xa.b-c', 'xab'],
  ['^[a-z]?([a-z0-9-]+\\.)+[a-z]{2,}$', 'a1.example.net', 'example'],
];

for (const [pattern, good, bad] of BOUNDED_BEFORE) {
  test(`bug: ${pattern} was refused (a bounded item's ways times length^2, though a separator ends the group's copies) and the precise reading was not tried; now it is taken and run`, () => {
    takenAndRun(pattern, good, bad);
  });
}

test('a refusal for the ways of bounded items is read precisely too, and kept where the run after the group still shares its characters', () => {
  // ^(www\.)?([a-z]+\.)*[a-z.]{2,}$: 117 ms on 10,000 characters ("a." copies and a '!'), 525 ms on 20,000
  for (const p of ['^(www\\.)?([a-z]+\\.)*[a-z.]{2,}$', '^(www\\.)?(\\.[a-z]+)*[a-z]{2,}$', '^[a-c]{0,3}([a-z]+\\.)*[a-z.]{2,}$']) {
    new RegExp(p, 'u');
    assert.match(patternProblem(p), /with 2 unbounded repetitions beside it can split the same text in about [24]\.0 ways times length\^2/, p);
  }
});

// measured on main's build: 124 s on 11 copies of "abbbbb" and a '!'; 480 ms on 12 copies of "-...." (doubling about every copy)
test('bug: a repeated group whose body holds an optional group that splits its text two ways was taken (^(?:a(?:b*b*)?){11}$ took 124 s on 67 characters); the optional group now counts the repetitions inside it', () => {
  for (const p of ['^(?:a(?:b*b*)?){11}$', '^(?:a(?:b*b*)?)*$', '^(?:-(?:\\.+[a.]*)?)*!', '^(?:(?:[a-c]{0,2}[a.]*)?x)+$']) {
    new RegExp(p, 'u');
    assert.match(patternProblem(p), /^the repeated group .* can match the same text in more than one way/, p);
  }
  // an optional group of one way stays taken
  for (const p of ['^(?:a(?:b*c)?)*$', '^(\\d+(\\.\\d+)?,)*$']) assert.equal(patternProblem(p), null, p);
});

// Hostname labels: the build before read "[a-z0-9]+" and "(-[a-z0-9]+)*" as able to share characters;
// every copy of the inner group begins with the '-' the run cannot take. Crafted worst cases (copies of
// "a-", "a.", "a-a.", runs of one character; 100,000 characters): under 1 ms.
for (const [pattern, good, bad] of [
  ['^([a-z0-9]+(-[a-z0-9]+)*\\.)+[a-z]{2,}$', 'my-server.mc-net.org', 'my--server.org'],
  ['^([a-z0-9]+(-[a-z0-9]+)*)(\\.[a-z0-9]+(-[a-z0-9]+)*)*$', 'turtle-1.base-2', 'turtle-.base'],
]) {
  test(`bug: the hostname pattern ${pattern} was refused (its group's body read as splitting a label two ways); now it is taken and run`, () => {
    takenAndRun(pattern, good, bad);
  });
}

test('a repeated group\'s body is cut only where the rest cannot start with what the part before takes', () => {
  // the [a-c]* can take the b that starts the rest ("xabc": a|b|c or ab||c), the a* the a after an optional '-'
  for (const p of ['^(?:x[a-c]*b?c)*$', '^(?:a*(?:-?a+)*\\.)+$']) {
    new RegExp(p, 'u');
    assert.match(patternProblem(p), /^the repeated group .* can match the same text in more than one way/, p);
  }
});

// measured on main's build: ^(?:[ab]+[bc]c+)*$ 2.8 s on 26 "abcc" and a '!', ^a+(?:\dx*[^.][bc]?)*! 191 ms on 22 "1xb" (doubling with each copy)
test('bug: a repeated group whose body\'s repetitions trade characters through a fixed item between them was taken (^(?:[ab]+[bc]c+)*$: "abcc" is a|b|cc or ab|c|c, 2.8 s on 105 characters); the item now carries the chain on with its characters', () => {
  for (const p of ['^(?:[ab]+[bc]c+)*$', '^a+(?:\\dx*[^.][bc]?)*!', '^(?:[ab]+[bc][cd]d+)*$', '^(?:b\\d-+?[^a]\\.+?)*\\.[a-z]{2,}$']) {
    new RegExp(p, 'u');
    assert.match(patternProblem(p), /^the repeated group .* can match the same text in more than one way/, p);
  }
  // a fixed item that neither side can shift into stays a boundary
  for (const p of ['^(?:a[bc][cd]d+)*$', '^[ab](?:-[ab]a{0,2}[bc]?)*!', '^(?:\\w+,\\s?)*\\w+$']) assert.equal(patternProblem(p), null, p);
});
