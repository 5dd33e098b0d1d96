/*
 * reload.h: SIGHUP: the settings and the databases again, without a restart.
 *
 * Settings: the config file and the original command line are parsed again
 * (flags still override the file); what a running server can change (the
 * LIVE rows of options.h: limits, tokens, idle timeout, log level) takes
 * effect at once (new limits apply to what comes next, never to work in
 * flight), and what needs a restart (its RESTART rows: addresses, ports,
 * tick rate, data directory, startup databases) is kept, with a warning
 * naming each flag. A file that no longer parses changes nothing and says why.
 * Databases: every database loaded from a file is opened again on the thread
 * pool and swapped in on the loop when it is good, as a reload request does;
 * one that fails to open keeps serving its last good version.
 */
#ifndef SRV_RELOAD_H
#define SRV_RELOAD_H

struct srv_server;

/* Starts a reload (loop thread). Returns at once; work continues on the pool. */
void srv_server_reload(struct srv_server *server);

#endif
