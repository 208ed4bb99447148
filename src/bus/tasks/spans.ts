/** Span names of the task queue: an enqueue, and each run of a task, the run a child of its enqueue. */
export const TaskSpanName = { enqueue: 'molo.task.enqueue', run: 'molo.task.run' } as const;
