import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import { PLATFORM_MODULES } from '../../ports/module-registry.js'
import type { ConformanceGroup } from '../group.js'

/** The `ModuleRegistry` port: stored rows decide; a company without a row has only `core`. */
export const moduleRegistryGroup: ConformanceGroup = {
  title: 'module registry',
  requires: ['modules'],
  define(ctx) {
    it('answers from the stored rows, switched-off modules included', async () => {
      const registry = ctx.modules()
      const rows = ctx.fixture.modules
      if (!rows.some((row) => !row.active)) throw new Error('conformance suite bug: the fixture needs an inactive module')
      const actual: string[] = []
      for (const row of rows) actual.push(`company ${row.company_id} ${row.module}: ${String(await registry.isActive(row.company_id, row.module))}`)
      expect(actual, 'isActive(company, module) for every stored row').toEqual(
        rows.map((row) => `company ${row.company_id} ${row.module}: ${String(row.active)}`),
      )
    })

    it('a company without rows has only core active', async () => {
      const registry = ctx.modules()
      const unknown = Math.max(...ctx.expected.companyIds) + 1_000
      const actual: Record<string, boolean> = {}
      for (const module of PLATFORM_MODULES) actual[module] = await registry.isActive(unknown, module)
      const expected = Object.fromEntries(PLATFORM_MODULES.map((module) => [module, module === 'core']))
      expect(actual, `isActive(${unknown}, module) for a company without module rows`).toEqual(expected)
    })
  },
}
