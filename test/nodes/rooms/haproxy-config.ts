/** HAProxy in front of two rooms instances: the configuration the HAProxy test runs. */
export function haproxyConfig(front: number, a: number, b: number): string {
  return `global
  maxconn 2000

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  # A WebSocket (or SSE stream) is a tunnel once upgraded: idle up to this long.
  timeout tunnel 1h
  option redispatch
  retries 2

frontend rooms
  bind 127.0.0.1:${front}
  default_backend instances

backend instances
  balance roundrobin
  # Sticky: the first response sets MOLO_INSTANCE; a dead server's cookie is redispatched.
  cookie MOLO_INSTANCE insert indirect nocache
  option httpchk GET /health
  server a 127.0.0.1:${a} check inter 300 fall 2 rise 1 cookie a
  server b 127.0.0.1:${b} check inter 300 fall 2 rise 1 cookie b
`;
}

