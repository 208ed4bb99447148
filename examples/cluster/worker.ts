/**
 * The worker of the cluster example, spawned on another node by module URL. Given a supervisor's
 * ref, it links to it first thing (as Erlang's remote spawn_link), so the supervisor on node A
 * sees it exit, with `noconnection` if its node dies.
 */
import { CallRequest, type ActorBehaviour, type Ref } from 'molo/actors';

export function worker(supervisor: Ref | null): ActorBehaviour {
  return {
    name: 'cluster-worker',
    init(ctx) {
      if (supervisor !== null) ctx.link(supervisor);
    },
    handle(ctx, message) {
      if (!(message instanceof CallRequest)) return;
      const request = message.request as readonly [string, number?];
      if (request[0] === 'where') message.reply(ctx.self.node);
      else if (request[0] === 'square') message.reply((request[1] ?? 0) ** 2);
      else message.reply(null);
    },
  };
}
