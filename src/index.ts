export { workforceApi, workforceApi as default, type WorkforceApiDecorator } from './plugin.js'
export { workforceAdmin } from './admin/plugin.js'
export type { AdminSession, WorkforceAdminOptions } from './admin/options.js'
export { PORTAL_CSP } from './admin/portal.js'
export { AUDIT_ACTIONS, type AuditAction, type AuditEntry, type AuditFor, type AuditPage, type AuditStore } from './ports/audit-store.js'
export type { UsageIncrement, UsageRow, UsageStore } from './ports/usage-store.js'
export { WEBHOOK_DEFAULTS, type WebhookOptions, type WorkforceApiOptions } from './options.js'
export type { AuthenticatedKey } from './auth/key-verifier.js'
export { hashSecret, parseApiKey } from './auth/api-key.js'
export { InvitationError, InvitationManager, type InvitationRef } from './invitations/invitation-manager.js'
export type { Invitation, InviteSender } from './ports/invite-sender.js'
export { INVITATION_STATUSES } from './ports/records.js'
export { KeyManager, KeyManagementError, type ApiKeyInfo, type CreateKeyInput, type CreatedKey } from './keys/key-manager.js'
export { normaliseScopes, type HostScopes, type KeyScope } from './keys/key-manager.js'
export type { Clock } from './ports/clock.js'
export { systemClock } from './ports/clock.js'
export type { ApiKeyRecord, KeyState, KeyStore } from './ports/key-store.js'
export { PLATFORM_MODULES, type ModuleRegistry, type PlatformModule } from './ports/module-registry.js'
export type * from './ports/storage.js'
export type * from './ports/records.js'
export { portsOf, type WorkforcePorts } from './ports/index.js'
export { StorageUnavailable } from './ports/errors.js'
export { StatementTimeout } from './ports/errors.js'
export { WriteConflict } from './ports/errors.js'
export { ALL_SCOPES, SCOPE_MODULES, type Scope } from './scopes.js'
export { ErrorEnvelope, OPTION_ERROR_CODES, UNAUTHORIZED_MESSAGE, WorkforceOptionError, WorkforceRefusal, type ErrorDetail, type RefusalReason } from './errors.js'
export { handleError as workforceErrorHandler, handleNotFound as workforceNotFoundHandler, workforceFrameworkErrors } from './corridor/render.js'
export {
  DEFAULT_SERVER_LIMITS,
  hardenWorkforceServer,
  workforceClientErrorHandler,
  workforceServerOptions,
  type ServerLimits,
} from './server/server-limits.js'
export { READINESS_TIMEOUT_MS, workforceReadiness, type Readiness } from './server/health.js'
export type { RateLimitOptions } from './corridor/rate-limit.js'
export type { RouteTableEntry } from './corridor/index.js'
export type { MetricsOption } from './metrics/request-metrics.js'
export { METRIC_PREFIX, UNMATCHED_ROUTE, type DeliveryOutcome, type MetricsOptions, type PoolCounts, type ReadPoolCounts, type StorageErrorKind } from './metrics/workforce-metrics.js'
export { LOG_REDACT_PATHS } from './logging.js'
export { generateWebhookSecret, signWebhook, verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions } from './webhooks/signature.js'
export { checkDestination, isPublicAddress, WebhookDestinationError, type DestinationPolicy } from './webhooks/destination.js'
export { ALL_EVENTS, EventSubscriptionError } from './events/event-types.js'
export { EVENT_TYPES, type EventInput, type EventRecord, type EventType } from './api/index.js'
export { defineResource, EVENT_ACTIONS, type AnyResourceDeclaration, type EventAction, type ListDeclaration, type OperationDocs, type ResourceDeclaration, type ResourceDocs } from './api/resource.js'
export { ResourceCatalogue, ResourceDeclarationError, EventInputError, type AnyEventInput } from './api/catalogue.js'
export type { ApiContext, RouteSpec } from './api/route-spec.js'
export { Day, Id, Nullable, StringEnum, Timestamp, timestamp } from './api/wire.js'
export { checkDayRange, updatedSince, type FilterContext } from './api/filters.js'
export { WebhookAdminError, WebhookManager, type CreateEndpointInput, type UpdateEndpointInput, type WebhookEndpoint } from './webhooks/webhook-manager.js'
export { EventPublisher, EventPublishError } from './webhooks/event-publisher.js'
export type { EndpointDisabledNotice, EndpointFailingNotice } from './webhooks/dispatcher.js'
export { httpWebhookTransport, type HttpTransportOptions } from './webhooks/http-transport.js'
export { recordingWebhookTransport, type RecordedWebhook, type RecordingWebhookTransport } from './webhooks/recording-transport.js'
export { DEFAULT_RETRY_SCHEDULE_MS, parseRetrySchedule } from './webhooks/retry.js'
export type * from './ports/webhook-store.js'
export type { WebhookRequest, WebhookResponse, WebhookTransport } from './ports/webhook-transport.js'
export type { ChangeEvent } from './ports/write-storage.js'
export type { NewPerson, TodoFields, WriteStorage, WriteTransaction } from './ports/write-storage.js'
export type { IdempotencyBegin, IdempotencyBeginResult, IdempotencyStore, StoredResponse } from './ports/idempotency-store.js'
export type { CacheInvalidation, InvalidationFeed } from './ports/invalidation-feed.js'
export type { ModuleSwitchboard, ReferenceAdapterPorts } from './ports/index.js'
export {
  emptyDataset,
  type AbsenceRow,
  type Dataset,
  type EmployeeRow,
  type ExpenseRow,
  type InvitedPerson,
  type MembershipRow,
  type ModuleRow,
  type PersonRow,
  type ProjectRow,
  type ShiftRow,
  type TodoListRow,
} from './ports/dataset.js'
