/** GET over a fresh connection with headers fetch will not let us set (Host), for the admin attack tests. */
import { request } from 'node:http';

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export function httpGet(url: string, headers: Readonly<Record<string, string>> = {}, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers, timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
