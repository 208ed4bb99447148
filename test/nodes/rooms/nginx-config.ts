/**
 * nginx (open-source build) in front of two rooms instances: the configuration the nginx test runs.
 * Open-source nginx has no `sticky cookie`, so stickiness is built from a cookie it sets itself
 * (naming the instance that answered) and a map from that cookie to an upstream that prefers the
 * same instance, the other one as its backup (so a dead instance's clients fail over).
 */
export function nginxConfig(front: number, a: number, b: number, runDir: string): string {
  return `worker_processes 1;
pid ${runDir}/nginx.pid;
error_log stderr error;
events { worker_connections 1024; }

http {
  access_log off;
  client_body_temp_path ${runDir}/body;
  proxy_temp_path ${runDir}/proxy;

  map $http_upgrade $connection_upgrade {
    default upgrade;
    ''      close;
  }
  # Which instance a client is pinned to, from the cookie set on its first response.
  map $cookie_MOLO_INSTANCE $rooms_upstream {
    a       rooms_a;
    b       rooms_b;
    default rooms_any;
  }
  # Which instance answered (the last address tried), for the cookie.
  map $upstream_addr $rooms_served {
    "~:${a}$" a;
    "~:${b}$" b;
  }

  upstream rooms_any {
    server 127.0.0.1:${a} max_fails=1 fail_timeout=5s;
    server 127.0.0.1:${b} max_fails=1 fail_timeout=5s;
  }
  upstream rooms_a {
    server 127.0.0.1:${a} max_fails=1 fail_timeout=5s;
    server 127.0.0.1:${b} backup;
  }
  upstream rooms_b {
    server 127.0.0.1:${b} max_fails=1 fail_timeout=5s;
    server 127.0.0.1:${a} backup;
  }

  server {
    listen 127.0.0.1:${front};

    location / {
      proxy_pass http://$rooms_upstream;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      # A refused connection (a dead instance) moves on to the next server of the upstream.
      proxy_next_upstream error timeout;
      proxy_connect_timeout 2s;
      # A WebSocket (or SSE stream) is a tunnel once upgraded: idle up to this long.
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_buffering off;
      add_header Set-Cookie "MOLO_INSTANCE=$rooms_served; Path=/; HttpOnly" always;
    }
  }
}
`;
}
