// The admin area: node lifecycle (startNode, graceful shutdown), the admin actor and the HTTP admin surface.
export {
  DEFAULT_SHUTDOWN_DEADLINE_MS,
  MAX_SHUTDOWN_DEADLINE_MS,
  ROOT_NAME,
  startNode,
  stderrLog,
  type AdminSurfaceOptions,
  type MoloNode,
  type NodeLog,
  type NodeOptions,
  type NodeStopResult,
  type StopTrigger,
} from './node.js';
export type { NodeMetricsOptions } from './node-metrics.js';
export {
  Admin,
  ADMIN_NAME,
  AdminServer,
  DEFAULT_SNAPSHOT_CALL_TIMEOUT_MS,
  DEFAULT_SNAPSHOT_TIMEOUT_MS,
  MAX_CONCURRENT_SNAPSHOTS,
  MAX_SNAPSHOT_TIMEOUT_MS,
  type AdminCast,
  type AdminOptions,
  type AdminPhase,
  type AdminReply,
  type AdminRequest,
  type HealthReport,
  type HealthCheck,
  MAX_HEALTH_CHECKS,
} from './admin-actor.js';
export {
  ADMIN_ENDPOINTS,
  DEFAULT_ADMIN_HOST,
  DEFAULT_ADMIN_PORT,
  DEFAULT_ADMIN_HEADER_TIMEOUT_MS,
  DEFAULT_ADMIN_MAX_REQUESTS,
  MAX_ADMIN_CONNECTIONS,
  OPS_ENDPOINTS,
  PROMETHEUS_CONTENT_TYPE,
  defaultMetrics,
  startAdminHttp,
  type AdminEndpoint,
  type AdminHttpOptions,
  type AdminHttpServer,
  type MetricsSource,
  type OpsListenOptions,
} from './http.js';
export { MIN_TOKEN_LENGTH } from './request-guard.js';
export {
  MAX_TREE_DEPTH,
  SUPERVISOR_BEHAVIOUR,
  takeTreeSnapshot,
  type ProcessSummary,
  type SectionEntry,
  type SnapshotError,
  type SupervisorSummary,
  type TreeNode,
  type TreeSnapshot,
  type TreeSnapshotOptions,
} from './tree-snapshot.js';
export { takeProcessSnapshot, type ProcessEntry, type ProcessSnapshot } from './process-snapshot.js';
/** Human-readable renderings of the snapshots above, as `molo tree` / `molo processes` / `molo health` print them. */
export { formatHealth, formatProcesses, formatTree } from './format/snapshots.js';
export { MAX_SNAPSHOT_BYTES, MIN_SNAPSHOT_BYTES } from './snapshot-budget.js';
export { PROGRAM_SUPERVISOR_BEHAVIOUR, programsProvider, streamConsumersProvider, type SnapshotProvider } from './snapshot-provider.js';
export { ADMIN_MAX_ENQUEUE_BATCH, ADMIN_MAX_REDRIVE_IDS, matchTaskRoute, type TaskRoute } from './task-routes.js';
export { DEFAULT_ADMIN_BODY_TIMEOUT_MS, DEFAULT_ADMIN_MAX_BODY_BYTES, MAX_ADMIN_BODY_TIMEOUT_MS, MAX_ADMIN_MAX_BODY_BYTES } from './request-body.js';
export type { AdminHttpStats } from './admission.js';
export {
  AdminActionFailed,
  AdminBadRequest,
  AdminBodyTooLarge,
  AdminEventsFull,
  AdminBodyTimeout,
  AdminBadResponse,
  AdminBusy,
  AdminErrorCode,
  AdminInvalidOption,
  AdminListenFailed,
  AdminMethodNotAllowed,
  AdminHostRefused,
  AdminNotFound,
  AdminOverloaded,
  AdminTokenRequired,
  AdminUnauthorized,
  AdminUnavailable,
  AdminUnreachable,
  CliUsageError,
  MetricsFailed,
  NodeStartFailed,
  SnapshotFailed,
  SnapshotTimeout,
} from './errors.js';
export { clusterView, serveNodes, MAX_REMEMBERED_DOWN_NODES, RTT_TIMEOUT_MS, type ClusterView, type NodeLinkReport, type NodesReport } from './nodes-view.js';
export { OBSERVER_LIMITS, DEFAULT_OBSERVER_SETTINGS, type ObserverOptions, type ObserverSettings } from './observer/options.js';
export { MAX_OBSERVER_PAGE_BYTES } from './observer/assets.js';
export { MAX_FRAME_QUEUES, type ObserverFrame, type ObserverSample, type TreeFailure } from './observer/frame.js';
export { CHILD_ACTIONS, PROGRAM_ACTIONS, matchAction, type ObserverAction } from './observer/actions.js';
export type { EventStats } from './observer/events.js';
export { STREAM_VIEW_LIMITS, type StreamMessageView } from './stream-routes.js';
