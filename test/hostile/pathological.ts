/**
 * Pathological strings for the bounded-work tests (issue 15, item 1): long
 * runs of one character class, runs that almost match a pattern and then
 * fail (`a`*N + `!`), deep nesting, one huge line, many tiny lines, unicode.
 * Each is about `n` characters; a step quadratic in a run takes seconds on
 * them where a linear one takes milliseconds.
 */
export function pathologicalStrings(n: number): Array<[name: string, text: string]> {
  const rep = (unit: string, tail = '') => unit.repeat(Math.max(1, Math.floor(n / unit.length))) + tail;
  return [
    ['letters', rep('a')],
    ['upper letters', rep('A')],
    ['digits', rep('7')],
    ['letters then bang', rep('a', '!')],
    ['digits then bang', rep('1', '!')],
    ['letters with dashes', rep('a-')],
    ['letters with dots', rep('a.')],
    ['letters with slashes', rep('a/', '!')],
    ['letters with underscores', rep('a_', '!')],
    ['camel case run', rep('aB', '_')],
    ['hex run', rep('a1', 'g')],
    ['dashes', rep('-', 'a-')],
    ['hashes', rep('#', '!')],
    ['spaces', rep(' ', 'x')],
    ['tabs', rep('\t', 'x')],
    ['angle brackets', rep('<')],
    ['tag openers', rep('<a ')],
    ['quotes', rep('"')],
    ['backslashes', rep('\\')],
    ['deep arrays', `${'['.repeat(Math.min(n, 20000))}${']'.repeat(Math.min(n, 20000))}`],
    ['deep objects', `${'{"a":'.repeat(Math.min(n / 5, 20000))}1${'}'.repeat(Math.min(n / 5, 20000))}`],
    ['unclosed arrays', rep('[')],
    ['many tiny lines', rep('a\n')],
    ['many blank lines', rep('\n', 'x')],
    ['many crlf lines', rep('x\r\n')],
    ['stack frame with a long name', `    at ${rep('a')}:1`],
    ['grep-like line', `${rep('a')}:12:`],
    ['path run without extension', `${rep('a')}/b`],
    ['words', rep('word ')],
    ['numbers', rep('1.5 ')],
    ['timestamps', rep('2024-01-01T00:00:00Z ')],
    ['accented letters', rep('é')],
    ['emoji', rep('😀')],
    ['lone surrogates', rep('\ud800')],
    ['nul bytes', rep('\u0000')],
    ['ansi escapes', rep('\u001b[')],
    ['json string of letters', JSON.stringify({ data: rep('a') })],
    ['json lines of letters', rep(`{"k":"${'a'.repeat(50)}"}\n`)],
    [
      'diff of letters',
      `diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-${rep('a')}\n+${rep('b')}\n`,
    ],
    ['html of letters', `<html><body><p>${rep('a')}</p>`],
    ['table-like row', rep('ab  ')],
  ];
}
