import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

/**
 * Finds the string literals that name a resource: a literal whose text is the name (`'todos'`),
 * or starts with it as an event type (`'todos.created'`), a scope (`'todos:read'`) or a path
 * (`'/v1/todos'`, `'/v1/todos/:id'`). The test of issue 23 (resource-names.test.ts) uses it to
 * keep each name in its declaration, its table and its tests.
 *
 * What counts as a literal, decided here:
 * - the file is parsed by the TypeScript compiler, so comments (`//…`, `/*…*\/`) never count and a
 *   quote inside a comment or a regular expression cannot start a false string;
 * - `'…'`, `"…"` and backtick literals without interpolation count by their whole text, wherever
 *   they stand: values, property keys in quotes, literal types (`type T = 'todos'`), imports;
 * - a template with interpolations counts by each of its text pieces, checked like a string:
 *   `` `/v1/todos/${id}` `` and `` `todos.${action}` `` restate the name in their first piece,
 *   while `` `${declaration.name}.${action}` `` derives it and has no piece to match;
 * - an identifier is never a literal: `storage.todos` or `{ todos }` name a member, not the resource.
 */

/** One literal naming a resource: where it stands and what it says. */
export interface ResourceLiteral {
  /** The file, as given (a repository path in the test). */
  file: string
  /** 1-based. */
  line: number
  /** The literal's text (a template's piece), without quotes. */
  literal: string
  /** The resource it names. */
  name: string
}

/** The resource `text` names, by the rules above, or `undefined`. */
export function resourceNamed(text: string, names: readonly string[]): string | undefined {
  return names.find((name) => {
    if (text === name || text.startsWith(`${name}.`) || text.startsWith(`${name}:`)) return true
    const path = `/v1/${name}`
    // `/v1/todos`, `/v1/todos/12`, `/v1/todos?…`: not `/v1/todosx`.
    return text.startsWith(path) && !/^[A-Za-z0-9_]/.test(text.slice(path.length))
  })
}

/** The literals of one file's source text that name a resource, in source order. */
export function resourceLiteralsOf(file: string, text: string, names: readonly string[]): ResourceLiteral[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: ResourceLiteral[] = []
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const name = resourceNamed(node.text, names)
      if (name !== undefined) {
        found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, literal: node.text, name })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** Every `.ts` file below `folder` of `root` (a file or a folder), as paths relative to `root` with `/`. */
export function typeScriptFiles(root: string, folder: string): string[] {
  const here = join(root, folder)
  if (statSync(here).isFile()) return folder.endsWith('.ts') ? [folder] : []
  return readdirSync(here)
    .sort()
    .flatMap((entry) => typeScriptFiles(root, folder === '' ? entry : `${folder}/${entry}`))
}

/** The literals naming a resource in every `.ts` file below `folders` of `root`. */
export function resourceLiteralsIn(root: string, folders: readonly string[], names: readonly string[]): ResourceLiteral[] {
  return folders.flatMap((folder) => typeScriptFiles(root, folder)).flatMap((file) => resourceLiteralsOf(file, readFileSync(join(root, file), 'utf8'), names))
}
