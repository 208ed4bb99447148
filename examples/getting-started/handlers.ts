/**
 * The getting-started app's task handlers. `welcome` asks the local greeter for a greeting and
 * stores the guest with the ORM; `report` (what the schedule enqueues) reads the guests back.
 * Handlers run at least once, so `welcome` is idempotent: a guest already stored is not stored again.
 * A module of the example, not a program.
 */
import type { ActorRuntime } from 'molo/actors';
import { GenServer } from 'molo/behaviours';
import { defineTask, type TaskHandlers } from 'molo/bus';
import { eq, type Orm } from 'molo/data/orm';
import type { Greeter } from './greeter.js';
import { Guest } from './model.js';

/** The welcome task, named once: its payload is checked at enqueue, and again before it runs. */
export const welcome = defineTask<{ name: string }>('welcome', {
  is: (payload): payload is { name: string } => typeof (payload as { name?: unknown } | null)?.name === 'string',
});

export function guestHandlers(system: ActorRuntime, orm: Orm): TaskHandlers {
  return {
    ...welcome.handle(async ({ name }) => {
      if (await orm.query(Guest).where(eq(Guest.c.name, name)).exists()) return;
      const greeting = (await GenServer.call<Greeter>(system, 'greeter', { greet: name })) as string;
      const guest = await orm.insert(Guest, { name, greeting });
      console.log(`task welcome ran: stored guest #${guest.id} ${guest.name}: "${guest.greeting}"`);
    }),
    async report() {
      const guests = await orm.query(Guest).orderBy('id').all();
      console.log(`schedule fired: report: ${guests.length} guest(s): ${guests.map((guest) => guest.name).join(', ')}`);
    },
  };
}
