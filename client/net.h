/*
 * net.h: the client's sockets (client library internals, not installed).
 *
 * Resolving a host once into addresses kept for reconnection, connecting
 * (blocking with a time limit, or started and checked without blocking for
 * the reconnection state machine), and moving bytes without blocking. No
 * protocol, no client state: descriptors and byte counts only.
 */
#ifndef ANIM_CLIENT_NET_H
#define ANIM_CLIENT_NET_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  int family, socktype, protocol;
  unsigned len;
  unsigned char addr[128]; /* a struct sockaddr_storage */
} anim__address_t;

/* Every address host:port resolves to, in getaddrinfo's order, in a
 * caller-freed array (free()). 0, ANIM_ECONNECT (no such host), ANIM_ENOMEM. */
int anim__net_resolve(const char *host, int port, anim__address_t **out_addresses, int *out_count);

/* Connects to the first of n addresses that answers within timeout_ms each.
 * 0 (*out_fd: non-blocking, TCP_NODELAY), ANIM_ECONNECT or ANIM_ETIMEDOUT. */
int anim__net_connect(const anim__address_t *addresses, int n, int timeout_ms, int *out_fd);

/* Starts a non-blocking connect to address. 1: connected (*out_fd), 0: in
 * progress (*out_fd; see anim__net_connect_check), ANIM_ECONNECT. */
int anim__net_connect_start(const anim__address_t *address, int *out_fd);

/* Waits up to wait_ms (0: looks) for a connect in progress. 1: connected
 * (TCP_NODELAY set), 0: still in progress, ANIM_ECONNECT: failed. */
int anim__net_connect_check(int fd, int wait_ms);

/* Sends what the socket takes of data[0, len). 0 (*out_sent bytes, maybe
 * fewer than len) or ANIM_ECLOSED. */
int anim__net_send(int fd, const uint8_t *data, size_t len, size_t *out_sent);

/* Receives up to cap bytes. > 0: bytes read; 0: nothing now (would block);
 * ANIM_ECLOSED: end of stream or an error. */
long anim__net_recv(int fd, uint8_t *buf, size_t cap);

/* Waits up to timeout_ms for fd to be readable (or writable with
 * want_write). 1: ready, 0: timed out (or interrupted), ANIM_EIO. */
int anim__net_wait(int fd, int want_write, int timeout_ms);

#endif
