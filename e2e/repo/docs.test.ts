/**
 * The documentation as someone who clones the repository finds it: every
 * Markdown file's links point at files inside the repository that exist, no
 * file refers to the product owner's folder beside it (`../shared`), and
 * BENCHMARKS.md has no section twice.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const markdown = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && existsSync(join(ROOT, f)));

describe('Markdown files', () => {
  it('are found', () => {
    expect(markdown).toContain('README.md');
    expect(markdown).toContain('docs/architecture.md');
  });

  it('link only to files inside the repository that exist', () => {
    const bad: string[] = [];
    for (const file of markdown) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target!)) continue;
        const path = resolve(dirname(join(ROOT, file)), target!.split('#')[0]!);
        const inside = !relative(ROOT, path).startsWith('..');
        if (!inside || !existsSync(path)) bad.push(`${file}: ${target}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('do not refer to ../shared', () => {
    expect(markdown.filter((file) => readFileSync(join(ROOT, file), 'utf8').includes('../shared'))).toEqual([]);
  });
});

describe('BENCHMARKS.md', () => {
  const lines = readFileSync(join(ROOT, 'BENCHMARKS.md'), 'utf8').split('\n');

  it('has no heading twice under the same parent', () => {
    const seen = new Set<string>();
    const path: string[] = [];
    const repeated: string[] = [];
    for (const line of lines) {
      const m = /^(#+) (.*)$/.exec(line);
      if (!m) continue;
      path.length = m[1]!.length - 1;
      path.push(m[2]!);
      const key = path.join(' / ');
      if (seen.has(key)) repeated.push(key);
      seen.add(key);
    }
    expect(repeated).toEqual([]);
  });

  it('has no paragraph twice', () => {
    const paragraphs = lines
      .join('\n')
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => p.length > 200);
    const repeated = paragraphs.filter((p, i) => paragraphs.indexOf(p) !== i);
    expect(repeated).toEqual([]);
  });
});
