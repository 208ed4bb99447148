/** Human-readable renderings of the task endpoints' answers, one line per queue, task or dead letter. */
import type { TaskDeadLetter, TaskQueueInfo, TaskRecord } from '../bus/tasks/api.js';

export function formatQueues(queues: readonly TaskQueueInfo[]): string {
  if (queues.length === 0) return 'no queues\n';
  const rows = queues.map((info) => {
    const counts = Object.entries(info.counts)
      .filter(([, n]) => n > 0)
      .map(([state, n]) => `${state} ${n}`)
      .join(', ');
    return `${info.name}${info.paused === true ? '  PAUSED' : ''}  depth ${info.depth}  dead letters ${info.deadLetters}${counts === '' ? '' : `  (${counts})`}`;
  });
  return `${rows.join('\n')}\n`;
}

/** Attempts made against attempts allowed (the first run plus `max_retries` retries), as BullMQ's attemptsMade / attempts. */
function attemptsOf(envelope: { readonly attempts: number; readonly max_retries: number }): string {
  return `${envelope.attempts}/${envelope.max_retries + 1}`;
}

export function formatTaskLine(task: TaskRecord): string {
  const { envelope } = task;
  return `${envelope.id}  ${task.queue}  ${envelope.name}  ${task.state}  attempts ${attemptsOf(envelope)}  priority ${task.priority}\n`;
}

export function formatTask(task: TaskRecord): string {
  const lines = [formatTaskLine(task).trimEnd(), `  payload ${JSON.stringify(task.envelope.payload)}`];
  lines.push(`  enqueued ${task.envelope.enqueued_at}  run after ${new Date(task.runAfter).toISOString()}${task.leaseUntil === null ? '' : `  lease until ${new Date(task.leaseUntil).toISOString()}`}`);
  lines.push(`  timeouts soft ${task.envelope.timeout_soft_ms} ms, hard ${task.envelope.timeout_hard_ms} ms${task.envelope.idempotency_key === null ? '' : `  idempotency key ${task.envelope.idempotency_key}`}`);
  if (task.history.length > 0) lines.push('  history:');
  for (const entry of task.history) {
    lines.push(`    ${new Date(entry.at).toISOString()}  ${entry.state}${entry.reason === undefined ? '' : `  ${entry.reason}`}${entry.detail === undefined ? '' : `  ${entry.detail}`}`);
  }
  return `${lines.join('\n')}\n`;
}

export function formatDeadLetters(letters: readonly TaskDeadLetter[]): string {
  if (letters.length === 0) return 'no dead letters\n';
  const rows = letters.map(
    (letter) => `${letter.envelope.id}  ${letter.envelope.name}  ${letter.reason}  ${new Date(letter.at).toISOString()}  attempts ${attemptsOf(letter.envelope)}${letter.detail === undefined ? '' : `  ${letter.detail}`}`,
  );
  return `${rows.join('\n')}\n`;
}
