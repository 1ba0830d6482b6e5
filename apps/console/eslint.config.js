// The repository's ESLint config, plus this workspace's own build outputs (the web app goes to dist/,
// already ignored; the compiled host and the Electron bundles go beside it).
import root from '../../eslint.config.js';

export default [{ ignores: ['dist-host/', 'dist-electron/'] }, ...root];
