/** One operation's example, as `npm run openapi` records it by calling the API over seed data. */
export interface OperationExample {
  query?: Readonly<Record<string, string | number | boolean>>
  body?: unknown
  status: number
  response: unknown
}
