// Preloaded (NODE_OPTIONS=--require) by `scripts/node-line.sh <major> --sqlite` into every Node
// process and worker thread of its command. node_modules/better-sqlite3 is built for the Node
// it was installed with (20); this loads the install for the running line, in
// .node-lines/<major>/sqlite/, wherever node_modules' one would have been loaded: a bare
// `better-sqlite3` from our files, or the file path Vite resolved it to for a test file.
// better-sqlite3 installed anywhere else (a consumer project in a temporary folder) is untouched.
'use strict'
const { existsSync, readFileSync } = require('node:fs')
const module_ = require('node:module')
const { join, posix } = require('node:path')
const { pathToFileURL } = require('node:url')

const drivers = process.env.WFA_NODE_LINE_SQLITE
const root = process.env.WFA_NODE_LINE_ROOT
if (drivers && root && !globalThis.__wfaNodeLine) {
  globalThis.__wfaNodeLine = true
  if (typeof module_.registerHooks !== 'function') {
    throw new Error(`scripts/node-line-preload.cjs needs module.registerHooks (Node 22.15 or later), not ${process.version}`)
  }
  const from = join(root, 'node_modules', 'better-sqlite3')
  const to = join(drivers, 'node_modules', 'better-sqlite3')
  const main = (dir) => posix.normalize(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).main ?? 'index.js')
  const [fromUrl, toUrl] = [pathToFileURL(from).href + '/', pathToFileURL(to).href + '/']
  const [fromMain, toMain] = [main(from), main(to)]
  module_.registerHooks({
    resolve(specifier, context, nextResolve) {
      const result = nextResolve(specifier, context)
      if (!result.url.startsWith(fromUrl)) return result
      // The package's entry point maps to the other version's; any other file to the same path.
      const relative = result.url.slice(fromUrl.length)
      const target = relative === fromMain || relative === `${fromMain}.js` ? toMain : relative
      const url = new URL(target, toUrl)
      if (!existsSync(url)) throw new Error(`${result.url} has no counterpart in ${to} (scripts/node-line-preload.cjs)`)
      return { ...result, url: url.href }
    },
  })
}
