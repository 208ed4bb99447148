/**
 * An actor's state bits, kept in one small integer (`ActorCell.flags`) so an idle actor stays small.
 * A module of their own, so the run queue, introspection and routers read them without the cell.
 */
export const SCHEDULED = 1;
export const AWAITING = 2;
export const TRAP_EXIT = 4;
export const EXITED = 8;
export const INITIALIZED = 16;
export const STOPPING = 32;
export const RUNNING = 64;
/** init has started and not yet settled (it may be async). */
export const INITIALIZING = 128;
