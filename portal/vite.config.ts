import { defineConfig } from 'vite'

/**
 * The integrations portal, built into `dist/portal/` after tsup (which empties `dist/`), in two
 * passes (package.json, `build:portal`):
 *
 * - the page: `index.html` and hashed assets under `assets/`, every URL relative (`base: './'`),
 *   so it works under any admin prefix, at `<prefix>/portal/`;
 * - `--mode element`: `workforce-portal.js`, the custom element alone, one classic script with
 *   Preact and the styles inside, for hosts that embed the screens in their own settings page.
 *
 * The two carry the same code twice (about 20 KB gzip each): one file a host can drop in, and a
 * page whose assets can be cached for ever, cannot share a chunk.
 */
export default defineConfig(({ mode }) => {
  const element = mode === 'element'
  return {
    base: './',
    // The element build copies nothing: the page's pass already did.
    publicDir: element ? false : 'public',
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
    build: {
      outDir: '../dist/portal',
      // Only the first pass starts from an empty folder; the second adds its one file.
      emptyOutDir: !element,
      // No polyfill script: the page has no dynamic imports, and a strict CSP forbids inline code.
      modulePreload: false,
      sourcemap: false,
      reportCompressedSize: false,
      lib: element
        ? { entry: 'src/element.tsx', formats: ['iife'], name: 'WorkforcePortal', fileName: () => 'workforce-portal.js' }
        : false,
      // `name.hash.ext`: the server caches names of that shape for a year (src/admin/portal.ts).
      rolldownOptions: element
        ? {}
        : { output: { entryFileNames: 'assets/[name].[hash].js', chunkFileNames: 'assets/[name].[hash].js', assetFileNames: 'assets/[name].[hash][extname]' } },
    },
  }
})
