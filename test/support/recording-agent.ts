import { CallRequest, DownMessage, ExitMessage, formatReason, type ActorContext, type ActorSystem, type Ref } from '../../src/actors/index.js';

export interface RecordingAgent {
  readonly ref: Ref;
  readonly ctx: ActorContext;
  /** EXITs and DOWNs as text, and anything else it was sent. */
  readonly seen: string[];
}

/**
 * An actor that records what it is sent (EXITs and DOWNs as text), echoes calls, and lends its
 * context, for tests that compare what operations do. `refs: false` leaves the sender's and the
 * DOWN's ref out of the text (for refs that differ from run to run).
 */
export function recordingAgent(system: ActorSystem, options: { readonly trapExit?: boolean; readonly refs?: boolean } = {}): Promise<RecordingAgent> {
  const { trapExit = true, refs = true } = options;
  const seen: string[] = [];
  return new Promise((resolve) => {
    const ref = system.spawn(
      {
        init(ctx) {
          resolve({ ref, ctx, seen });
        },
        handle(_ctx, message) {
          if (message instanceof ExitMessage) seen.push(`EXIT ${refs ? `${String(message.from)} ` : ''}${formatReason(message.reason)}`);
          else if (message instanceof DownMessage) seen.push(`DOWN ${refs ? `${String(message.ref)} ` : ''}${formatReason(message.reason)}`);
          else if (message instanceof CallRequest) message.reply(message.request);
          else seen.push(String(message));
        },
      },
      { trapExit },
    );
  });
}
