/*
 * net.h: socket helpers independent of the server (as redis keeps anet.c
 * apart): numeric addresses, their names, and a listening TCP handle.
 *
 * What it does not: read, write or frame (connection.h).
 */
#ifndef SRV_NET_H
#define SRV_NET_H

#include <stddef.h>
#include <uv.h>

/* A numeric IPv4 or IPv6 address and port. 0 or ANIM_EINVAL. */
int srv_address_parse(const char *host, int port, struct sockaddr_storage *out);

/* The numeric address and port of a socket address (IPv4 or IPv6). */
void srv_address_name(const struct sockaddr_storage *addr, char *out_host, size_t size, int *out_port);

/* Initializes tcp on loop and listens on host:port (port 0: ephemeral) with
 * backlog, calling cb for each connection. With reuseport the socket takes
 * SO_REUSEPORT before bind (libuv 1.44 has no bind flag for it), so several
 * processes can share the port. The handle is initialized even on failure
 * (close it). 0, or a libuv code; ANIM_EINVAL for an address that is not
 * numeric. out_host/out_port receive the bound address. */
int srv_listen(uv_tcp_t *tcp, uv_loop_t *loop, const char *host, int port, int reuseport, int backlog,
               uv_connection_cb cb, char *out_host, size_t host_size, int *out_port);

#endif
