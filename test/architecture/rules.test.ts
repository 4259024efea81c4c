import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FORMATS } from '../../src/formats/index.js';
import { importCycles, ROOT, sourceFiles } from './imports.js';

const SRC = join(ROOT, 'src');
const FORMAT_NAMES = new Set(Object.keys(FORMATS));
/** The exported format objects; only `formats/` may name one. */
const FORMAT_OBJECTS = new Set(Object.values(FORMATS).map((f) => `${f.name}Format`));

/**
 * Type-only cycles inside the engine (its option and output types refer to
 * each other). Erased at compile time; listed here so that any new cycle fails.
 */

describe('imports (docs/architecture.md: no import cycles)', () => {
  const files = sourceFiles(SRC);

  it('src/ has no import cycle at run time', () => {
    expect(importCycles(files, { types: false })).toEqual([]);
  });

  it('src/ has no cycle even counting type-only imports', () => {
    expect(importCycles(files, { types: true })).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself works)', () => {
    const a = join(ROOT, 'test', 'architecture', 'fixtures', 'cycle-a.ts');
    const b = join(ROOT, 'test', 'architecture', 'fixtures', 'cycle-b.ts');
    expect(importCycles([a, b], { types: false })).toEqual([
      ['test/architecture/fixtures/cycle-a.ts', 'test/architecture/fixtures/cycle-b.ts'],
    ]);
  });
});

/** Where a file outside `formats/` decides by a provider's name: `x === 'messages'`, `case 'chat':`, `FORMATS.chat`, `messagesFormat`. */
function providerBranches(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node) =>
    `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`;
  const isName = (node: ts.Node) =>
    (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && FORMAT_NAMES.has(node.text);
  const COMPARE = new Set([
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ]);
  const visit = (node: ts.Node) => {
    if (
      ts.isBinaryExpression(node) &&
      COMPARE.has(node.operatorToken.kind) &&
      (isName(node.left) || isName(node.right))
    )
      found.push(at(node));
    else if (ts.isCaseClause(node) && isName(node.expression)) found.push(at(node));
    else if (
      ts.isPropertyAccessExpression(node) &&
      node.expression.getText() === 'FORMATS' &&
      FORMAT_NAMES.has(node.name.text)
    )
      found.push(at(node));
    else if (
      ts.isElementAccessExpression(node) &&
      node.expression.getText() === 'FORMATS' &&
      isName(node.argumentExpression)
    )
      found.push(at(node));
    else if (ts.isIdentifier(node) && FORMAT_OBJECTS.has(node.text)) found.push(at(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('providers (docs/architecture.md: formats/ is the only place that knows them)', () => {
  it('no file outside src/formats/ branches on a format name or names a format object', () => {
    const outside = [...sourceFiles(SRC), ...sourceFiles(join(ROOT, 'commands'))].filter(
      (f) => !f.startsWith(join(SRC, 'formats')),
    );
    expect(outside.flatMap(providerBranches)).toEqual([]);
  });

  it('the check finds the branches it is about', () => {
    const file = join(ROOT, 'test', 'architecture', 'fixtures', 'provider-branch.ts');
    // the import and the use of `messagesFormat`, `=== 'messages'`, `case 'chat'`, `FORMATS.chat`
    expect(providerBranches(file)).toHaveLength(5);
  });
});
