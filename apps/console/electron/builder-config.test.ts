import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('electron-builder.yml', () => {
  const config = parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as Record<string, any>;
  const app = join(root, config.directories.app);

  it('packs the console app: its manifest, the main bundle it names, and the web build', () => {
    expect(existsSync(join(app, 'package.json'))).toBe(true);
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    expect(config.extraMetadata.main).toBe(pkg.main);
    expect(pkg.main).toBe('dist-electron/main.js');
    expect(config.files).toEqual(expect.arrayContaining(['dist/**', 'dist-electron/**', 'package.json']));
    // The main process reads these at run time (electron/main.ts).
    const main = readFileSync(join(app, 'electron', 'main.ts'), 'utf8');
    expect(main).toContain("'preload.cjs'");
    expect(main).toContain("'dist'");
  });

  it('targets Linux AppImage and deb, macOS dmg and Windows nsis, with no native rebuilds', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.mac.target).toEqual(['dmg']);
    expect(config.win.target).toEqual(['nsis']);
    expect(config.npmRebuild).toBe(false);
  });

  it('builds main as ESM and preload as one CommonJS file', () => {
    const vite = readFileSync(join(app, 'vite.electron.config.ts'), 'utf8');
    expect(vite).toContain("'preload.cjs'");
    expect(vite).toContain("'main.js'");
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).scripts.build).toContain('--mode preload');
  });
});
