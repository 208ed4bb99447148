export { TAIL_LIMITS as PROGRAM_LOG_TAIL_LIMITS, type ProgramLogLine, type ProgramLogs } from './log-tail.js';
export { DEFAULT_LOG_LINES, ProgramSupervisor, type ProgramSupervisorChildOptions, type ProgramSupervisorStartOptions } from './program-supervisor.js';
export {
  DEFAULT_BACKOFF_INITIAL_MS,
  DEFAULT_BACKOFF_MAX_MS,
  DEFAULT_LINE_BYTES,
  DEFAULT_MAX_RESTARTS,
  DEFAULT_PROBE_FAILURES,
  DEFAULT_PROBE_INTERVAL_MS,
  DEFAULT_PROBE_TIMEOUT_MS,
  DEFAULT_RESTART_WINDOW_MS,
  DEFAULT_STOP_TIMEOUT_MS,
  MAX_LINE_BYTES,
  MAX_PROGRAMS,
  MAX_STOP_TIMEOUT_MS,
  type CommandProbeSpec,
  type HealthCheckSpec,
  type ProbeTiming,
  type ProgramBackoffSpec,
  type ProgramRestart,
  type ProgramSpec,
  type ProgramSupervisorSpec,
  type StopSignal,
  type TcpProbeSpec,
  type UnhealthyAction,
} from './spec.js';
export type {
  ProgramExitCause,
  ProgramExitInfo,
  ProgramHealth,
  ProgramStatus,
  ProgramSupervisorStatus,
} from './protocol.js';
export { jsonLineLogger, type ProgramLogger } from './logger.js';
export { liveProgramProcessCount } from './os-process.js';
export { InvalidProgramSpec, ProgramAlreadyStarted, ProgramNotFound, TooManyPrograms } from '../errors.js';
