import { describe, expect, it } from 'vitest'
import { runConformance, type ConformanceFailure } from '../../src/conformance/runner.js'
import type { FeedPage, FeedQuery, WebhookStore } from '../../src/ports/webhook-store.js'
import { brokenSubject, override, type Ports } from './broken-adapters/wrap.js'

// The "events feed" group against the memory reference with one feed bug each, as the catalogue
// of broken adapters does for the other groups (broken-adapters.test.ts): each must fail it.

type ReadFeed = WebhookStore['readFeed']

interface BrokenFeed {
  name: string
  bug: string
  readFeed?: (base: ReadFeed, webhooks: WebhookStore) => ReadFeed
  feedHead?: (base: WebhookStore['feedHead']) => WebhookStore['feedHead']
}

/** `base`'s page, changed by `change` when it is not expired. */
function pageMapped(change: (page: Extract<FeedPage, { expired: false }>, query: FeedQuery, companyId: number) => FeedPage | Promise<FeedPage>) {
  return (base: ReadFeed): ReadFeed =>
    async (companyId, query) => {
      const page = await base(companyId, query)
      return page.expired ? page : change(page, query, companyId)
    }
}

function createdAt(payload: string): string {
  return String((JSON.parse(payload) as { created_at: string }).created_at)
}

const BROKEN_FEEDS: readonly BrokenFeed[] = [
  {
    name: 'skips-every-third-position',
    bug: 'events whose position is a multiple of 3 are dropped while next moves past them',
    readFeed: pageMapped((page) => ({ ...page, events: page.events.filter((event) => event.position % 3 !== 0) })),
  },
  {
    name: 'page-in-reverse',
    bug: 'each page lists its events newest first',
    readFeed: pageMapped((page) => ({ ...page, events: [...page.events].reverse() })),
  },
  {
    name: 'creation-order',
    bug: 'events are ordered by when they were created (occurred_at), not by when their transactions committed',
    readFeed: pageMapped((page) => {
      const payloads = page.events.map((event) => event.payload).sort((a, b) => createdAt(a).localeCompare(createdAt(b)))
      return { ...page, events: page.events.map((event, index) => ({ position: event.position, payload: payloads[index] as string })) }
    }),
  },
  {
    name: 'next-one-short',
    bug: 'next is one below the last position examined, so the last event comes again',
    readFeed: pageMapped((page) => ({ ...page, next: Math.max(0, page.next - 1) })),
  },
  {
    name: 'other-company-mixed-in',
    bug: "company 1's feed also holds company 2's events at the same positions",
    readFeed: (base) => async (companyId, query) => {
      const page = await base(companyId, query)
      if (page.expired || companyId !== 1) return page
      const theirs = await base(2, query)
      if (theirs.expired) return page
      const events = [...page.events, ...theirs.events].sort((a, b) => a.position - b.position).slice(0, query.limit)
      return { ...page, events: events.filter((event, index) => index === 0 || event.position !== events[index - 1]?.position) }
    },
  },
  {
    name: 'types-ignored',
    bug: 'the types filter is ignored: every type is returned',
    readFeed: (base, webhooks) => (companyId, query) => base.call(webhooks, companyId, { ...query, types: ['todos.created', 'todos.updated', 'users.created', 'shifts.deleted', 'webhook.test'] }),
  },
  {
    name: 'limit-ignored',
    bug: 'limit is ignored: up to scan events are returned',
    readFeed: (base) => (companyId, query) => base(companyId, { ...query, limit: query.scan }),
  },
  {
    name: 'scan-ignored',
    bug: 'scan is ignored: a filtered read examines every position until it finds limit events',
    readFeed: (base) => (companyId, query) => base(companyId, { ...query, scan: 1_000_000_000 }),
  },
  {
    name: 'has-more-by-page-length',
    bug: 'has_more is "the page is full", so a filtered page with fewer matches than limit ends the walk early',
    readFeed: pageMapped((page, query) => ({ ...page, has_more: page.events.length === query.limit })),
  },
  {
    name: 'has-more-never',
    bug: 'has_more is always false',
    readFeed: pageMapped((page) => ({ ...page, has_more: false })),
  },
  {
    name: 'expired-never',
    bug: 'a cursor below purged history silently restarts at the horizon instead of answering expired',
    readFeed: (base) => async (companyId, query) => {
      const page = await base(companyId, query)
      return page.expired ? base(companyId, { ...query, after: undefined }) : page
    },
  },
  {
    name: 'head-one-short',
    bug: 'feedHead is one below the newest position',
    feedHead: (base) => async (companyId) => Math.max(0, (await base(companyId)) - 1),
  },
]

function describeFailure(failure: ConformanceFailure): string {
  const message = failure.error instanceof Error ? `${failure.error.name}: ${failure.error.message}` : String(failure.error)
  return `${failure.test}: ${message.split('\n')[0]}`
}

function subjectWith(broken: BrokenFeed) {
  return brokenSubject({
    break: ({ webhooks }: Ports) => {
      const changes: Partial<Record<keyof WebhookStore, unknown>> = {}
      if (broken.readFeed !== undefined) changes.readFeed = broken.readFeed(webhooks.readFeed.bind(webhooks), webhooks)
      if (broken.feedHead !== undefined) changes.feedHead = broken.feedHead(webhooks.feedHead.bind(webhooks))
      return { webhooks: override(webhooks, changes) }
    },
  })
}

describe('the "events feed" group against broken feeds', () => {
  it('passes the reference behind the same wrapper', async () => {
    const result = await runConformance({ name: 'memory, unbroken', create: async () => subjectWith({ name: 'none', bug: 'none' }) }, { groups: ['events feed'] })
    expect(result.failures.map(describeFailure)).toEqual([])
    expect(result.ran).toBeGreaterThanOrEqual(9)
  })

  it.each(BROKEN_FEEDS)('catches $name', async (broken) => {
    const result = await runConformance({ name: `broken: ${broken.name}`, create: async () => subjectWith(broken) }, { groups: ['events feed'], bail: true })
    expect(result.failures.length, `"events feed" passed a feed whose bug is: ${broken.bug}`).toBeGreaterThan(0)
    expect(result.failures.map(describeFailure).filter((line) => line.includes('conformance suite bug')), "failures that are the suite's own").toEqual([])
  })
})
