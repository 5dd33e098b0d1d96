/*
 * net.c: the client's sockets (see net.h).
 *
 * Plain BSD sockets, always non-blocking: a blocking connect is a
 * non-blocking one plus poll() with the time limit. No framing, no
 * requests, no reconnection policy (that is reconnect.c's): descriptors in,
 * codes out.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "anim_error.h"
#include "net.h"

int anim__net_resolve(const char *host, int port, anim__address_t **out_addresses, int *out_count) {
  *out_addresses = NULL;
  *out_count = 0;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {0}, *list = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, service, &hints, &list) != 0) return ANIM_ECONNECT;
  int n = 0;
  for (const struct addrinfo *ai = list; ai; ai = ai->ai_next) n++;
  anim__address_t *addresses = calloc((size_t)n + 1, sizeof *addresses);
  if (!addresses) {
    freeaddrinfo(list);
    return ANIM_ENOMEM;
  }
  int count = 0;
  for (const struct addrinfo *ai = list; ai; ai = ai->ai_next) {
    if (ai->ai_addrlen > sizeof addresses[0].addr) continue;
    anim__address_t *a = &addresses[count++];
    a->family = ai->ai_family, a->socktype = ai->ai_socktype, a->protocol = ai->ai_protocol;
    a->len = (unsigned)ai->ai_addrlen;
    memcpy(a->addr, ai->ai_addr, ai->ai_addrlen);
  }
  freeaddrinfo(list);
  *out_addresses = addresses;
  *out_count = count;
  return 0;
}

static void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int anim__net_connect_start(const anim__address_t *a, int *out_fd) {
  int fd = socket(a->family, a->socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->protocol);
  if (fd < 0) return ANIM_ECONNECT;
  if (connect(fd, (const struct sockaddr *)a->addr, (socklen_t)a->len) == 0) {
    set_nodelay(fd);
    *out_fd = fd;
    return 1;
  }
  if (errno == EINPROGRESS) {
    *out_fd = fd;
    return 0;
  }
  close(fd);
  return ANIM_ECONNECT;
}

int anim__net_connect_check(int fd, int wait_ms) {
  struct pollfd p = {fd, POLLOUT, 0};
  int n;
  do n = poll(&p, 1, wait_ms);
  while (n < 0 && errno == EINTR);
  if (n == 0) return 0;
  int soerr = 0;
  socklen_t len = sizeof soerr;
  if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr != 0) return ANIM_ECONNECT;
  set_nodelay(fd);
  return 1;
}

int anim__net_connect(const anim__address_t *addresses, int n, int timeout_ms, int *out_fd) {
  int rc = ANIM_ECONNECT;
  for (int i = 0; i < n; i++) {
    int fd = -1;
    rc = anim__net_connect_start(&addresses[i], &fd);
    if (rc == 0) {
      rc = anim__net_connect_check(fd, timeout_ms);
      if (rc == 0) rc = ANIM_ETIMEDOUT;
    }
    if (rc == 1) {
      *out_fd = fd;
      return 0;
    }
    if (fd >= 0) close(fd);
  }
  return rc;
}

int anim__net_send(int fd, const uint8_t *data, size_t len, size_t *out_sent) {
  size_t sent = 0;
  while (sent < len) {
    ssize_t n = send(fd, data + sent, len - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      *out_sent = sent;
      return ANIM_ECLOSED;
    }
    sent += (size_t)n;
  }
  *out_sent = sent;
  return 0;
}

long anim__net_recv(int fd, uint8_t *buf, size_t cap) {
  for (;;) {
    ssize_t n = recv(fd, buf, cap, 0);
    if (n > 0) return (long)n;
    if (n == 0) return ANIM_ECLOSED;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return ANIM_ECLOSED;
  }
}

int anim__net_wait(int fd, int want_write, int timeout_ms) {
  struct pollfd p = {fd, (short)(POLLIN | (want_write ? POLLOUT : 0)), 0};
  int n = poll(&p, 1, timeout_ms);
  if (n < 0) return errno == EINTR ? 0 : ANIM_EIO;
  return n > 0 ? 1 : 0;
}
