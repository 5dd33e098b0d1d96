/* net.c: addresses and listeners (see net.h). */
#include <errno.h>
#include <sys/socket.h>
#include "anim_error.h"
#include "net.h"

int srv_address_parse(const char *host, int port, struct sockaddr_storage *out) {
  if (uv_ip4_addr(host, port, (struct sockaddr_in *)out) == 0) return 0;
  if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)out) == 0) return 0;
  return ANIM_EINVAL;
}

void srv_address_name(const struct sockaddr_storage *addr, char *out_host, size_t size, int *out_port) {
  if (addr->ss_family == AF_INET6) {
    uv_ip6_name((const struct sockaddr_in6 *)addr, out_host, size);
    *out_port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
  } else {
    uv_ip4_name((const struct sockaddr_in *)addr, out_host, size);
    *out_port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
  }
}

/* The socket must exist before bind to take SO_REUSEPORT: created for the
 * address's family, set, then bound; the kernel spreads new connections
 * over every socket bound to the port with the option (same user). */
static int open_tcp(uv_tcp_t *tcp, uv_loop_t *loop, const struct sockaddr_storage *addr, int reuseport) {
  if (!reuseport) return uv_tcp_init(loop, tcp);
  int rc = uv_tcp_init_ex(loop, tcp, addr->ss_family);
  if (rc < 0) {
    uv_tcp_init(loop, tcp);
    return rc;
  }
  uv_os_fd_t fd;
  if ((rc = uv_fileno((uv_handle_t *)tcp, &fd)) < 0) return rc;
  int on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) < 0) return uv_translate_sys_error(errno);
  return 0;
}

int srv_listen(uv_tcp_t *tcp, uv_loop_t *loop, const char *host, int port, int reuseport, int backlog,
               uv_connection_cb cb, char *out_host, size_t host_size, int *out_port) {
  struct sockaddr_storage addr;
  if (srv_address_parse(host, port, &addr) != 0) {
    uv_tcp_init(loop, tcp);
    return ANIM_EINVAL;
  }
  void *data = tcp->data; /* init clears it */
  int rc = open_tcp(tcp, loop, &addr, reuseport);
  tcp->data = data;
  if (rc == 0) rc = uv_tcp_bind(tcp, (const struct sockaddr *)&addr, 0);
  if (rc == 0) rc = uv_listen((uv_stream_t *)tcp, backlog, cb);
  if (rc < 0) return rc;
  int len = sizeof addr;
  uv_tcp_getsockname(tcp, (struct sockaddr *)&addr, &len);
  srv_address_name(&addr, out_host, host_size, out_port);
  return 0;
}
