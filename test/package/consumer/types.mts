// An ES module TypeScript host, compiled against the packed .d.ts files: strict, skipLibCheck
// false, under node16, nodenext and bundler resolution (test/package/consumer.test.ts).
import Fastify from 'fastify'
import workforceApi, {
  emptyDataset,
  portsOf,
  StorageUnavailable,
  type ChangeEvent,
  type Dataset,
  type IdempotencyStore,
  type InvalidationFeed,
  type Invitation,
  type InviteSender,
  type KeyScope,
  type KeyStore,
  type ModuleRegistry,
  type NewPerson,
  type ReferenceAdapterPorts,
  type Storage,
  type TodoFields,
  type WebhookStore,
  type WebhookTransport,
  type WorkforceApiDecorator,
  type WorkforceApiOptions,
  type WriteStorage,
  type WriteTransaction,
} from 'fastify-workforce-api'
import { createMemoryAdapter, type MemoryAdapter } from 'fastify-workforce-api/memory'
import type { ConformanceOptions, ConformanceSubject } from 'fastify-workforce-api/conformance'

const adapter: MemoryAdapter = createMemoryAdapter(emptyDataset())
const app = Fastify()
await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter) })

const decorator: WorkforceApiDecorator = app.workforceApi
const { key }: { key: string } = await decorator.keys.create({ companyId: 1, scopes: ['company:read', 'todos:write'] })
const all: KeyScope = 'all'
// @ts-expect-error 'todos:wrte' is not a scope
await app.workforceApi.keys.create({ companyId: 1, scopes: ['todos:wrte'] })
// @ts-expect-error `prefx` is not an option
const typo: WorkforceApiOptions = { ...portsOf(adapter), prefx: '/api/public' }

// What an adapter author implements, all from the package root.
const invites: InviteSender = {
  async sendInvite(invitation: Invitation) {
    console.log(invitation.email)
  },
}
const ports: ReferenceAdapterPorts = adapter
const options: WorkforceApiOptions = { ...portsOf(ports), invites }
type AdapterAuthorTypes = [Storage, KeyStore, ModuleRegistry, WriteStorage, WriteTransaction, IdempotencyStore, InvalidationFeed, WebhookStore, WebhookTransport, Dataset, ChangeEvent, NewPerson, TodoFields]
const unavailable: Error = new StorageUnavailable('down')

type Conformance = [ConformanceOptions, ConformanceSubject]

export { all, key, options, typo, unavailable, type AdapterAuthorTypes, type Conformance }
