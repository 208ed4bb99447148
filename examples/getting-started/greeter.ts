/**
 * The getting-started app's GenServer: it greets by name and counts its greetings. Both nodes run
 * one, registered as `greeter`; a call reaches it by name locally or by ref from another node.
 * A module of the example, not a program.
 */
import { GenServer } from 'molo/behaviours';

export type GreeterCall = { readonly greet: string } | { readonly count: true };

export class Greeter extends GenServer<GreeterCall, string | number> {
  private greeted = 0;

  override handleCall(request: GreeterCall): string | number {
    if ('count' in request) return this.greeted;
    this.greeted++;
    // The node name is in the ref: the answer says which node's greeter it came from.
    return `hello, ${request.greet}, from ${this.self.node}`;
  }
}
