/*
 * options.h: the one table of server options.
 *
 * Every setting of animserver is one row here, as every request is one row
 * of request_types.h:
 *
 *   X(name, KIND, field, default, min, max, RELOAD, arg, EXAMPLE, example, help)
 *
 *   name     the long flag without its dashes, and the config file's key;
 *   KIND     how its value is read (srv_option_kind_t below, without the
 *            SRV_OPTION_ prefix): NUMBER a whole number, REAL any number,
 *            TEXT a string, TOKEN / TOKEN_FILE a token or the first line of
 *            a file holding it, ON / OFF a flag without a value that sets
 *            the field to 1 / 0, LIST a repeatable name (--db), LEVEL a log
 *            level, CONFIG the config file itself (read first);
 *   field    the srv_config_t field it sets (config.h);
 *   default  its default as text, parsed like a value at srv_config_default
 *            (NULL: zero or empty; ON / OFF: "0" or "1", the field's value);
 *   min, max the bounds of a NUMBER or REAL (checked on parsing and by
 *            srv_config_validate); a TEXT field's bound is its size;
 *   RELOAD   LIVE: SIGHUP applies it to the running server (reload.c),
 *            RESTART: SIGHUP keeps the running value and warns;
 *   arg      the value's name in --help ("N", "DIR"; "" for a flag);
 *   EXAMPLE  how deploy/animserver.conf shows it: DEFAULT an active line
 *            with the default, SET an active line with `example`, COMMENT
 *            a commented line with `example`, NONE not at all;
 *   help     one paragraph for --help and the example file's comment.
 *
 * S(heading) rows group the options in --help and the example file.
 *
 * From this table come the defaults (srv_config_default), the command line
 * and config file parsing with their bounds (srv_config_parse_args), --help,
 * the per-field bounds of srv_config_validate, what SIGHUP may change
 * (reload.c) and the example file (srv_config_write_example, `make
 * example-config`; tests/server/test_config.c checks deploy/animserver.conf
 * equals it). Adding an option is one row here, its srv_config_t field, and
 * the code that uses it. Rules between options (soft <= hard limit,
 * protected mode) stay in srv_config_validate.
 */
#ifndef SRV_OPTIONS_H
#define SRV_OPTIONS_H

#include <stddef.h>

/* Bounds of byte counts: 1 TiB for a connection's output, 64 TiB for totals. */
#define SRV_OPTION_TIB 1099511627776.0
#define SRV_OPTION_64TIB 70368744177664.0

#define SRV_OPTIONS(X, S)                                                                                        \
  S("listening")                                                                                                 \
  X("host", TEXT, host, "127.0.0.1", 0, 0, RESTART, "ADDR", DEFAULT, NULL,                                       \
    "Listen address. An address other than loopback (127.0.0.0/8, ::1, localhost) needs an auth token: "         \
    "protected mode refuses to start without one.")                                                             \
  X("port", NUMBER, port, "7878", 0, 65535, RESTART, "N", DEFAULT, NULL,                                         \
    "Listen port; 0 takes an ephemeral one.")                                                                   \
  X("reuseport", ON, reuseport, "0", 0, 0, RESTART, "", COMMENT, "",                                             \
    "SO_REUSEPORT: several instances on one host share the port and the kernel spreads new connections over "   \
    "them (every instance needs it; default off).")                                                             \
  S("access")                                                                                                    \
  X("auth-token", TOKEN, auth_token, NULL, 0, 0, LIVE, "T", COMMENT, "CHANGE-ME",                                \
    "Clients must present this token in hello before anything else (default none; required off loopback). 1..127 "      \
    "printable bytes, no spaces.")                                                                              \
  X("auth-token-file", TOKEN_FILE, auth_token, NULL, 0, 0, LIVE, "F", COMMENT, "/etc/animserver/auth-token",     \
    "The auth token from the first line of this file: keeps it out of ps and of the config file.")                            \
  X("admin-token", TOKEN, admin_token, NULL, 0, 0, LIVE, "T", COMMENT, "CHANGE-ME-TOO",                          \
    "load, reload and unload need this token (default: the auth token).")                                                \
  X("admin-token-file", TOKEN_FILE, admin_token, NULL, 0, 0, LIVE, "F", COMMENT, "/etc/animserver/admin-token",  \
    "The admin token from the first line of this file.")                                                                \
  S("databases")                                                                                                 \
  X("data-dir", TEXT, data_dir, "data", 0, 0, RESTART, "DIR", SET, "/var/lib/animserver",                        \
    "Databases are loaded by name from this directory only (relative to the working directory). Identical on every "       \
    "instance behind one load balancer: compare the versions in list_databases.")                               \
  X("db", LIST, preload, NULL, 0, 0, RESTART, "NAME", COMMENT, "locomotion",                                     \
    "Load NAME.animdb from the data directory at startup (repeatable, up to 16; default none).")                                    \
  X("no-default-db", OFF, default_database, "1", 0, 0, RESTART, "", COMMENT, "",                                 \
    "Do not build the embedded procedural \"default\" database (default: built).")                              \
  X("lmm", TEXT, lmm_dir, NULL, 0, 0, RESTART, "DIR", COMMENT, "/var/lib/animserver/lmm",                        \
    "Learned motion matching: the directory's {projector,stepper,decompressor}.bin, served as MODE_LEARNED characters on "   \
    "the database \"lmm\" of their skeleton (default none). Networks trained on a database file (tools/lmm_train) "   \
    "are found beside it instead, NAME.lmm/.")                                                                  \
  X("lmm-default", TEXT, lmm_default_dir, NULL, 0, 0, RESTART, "DIR", COMMENT, "/var/lib/animserver/default.lmm", \
    "Learned motion matching on the embedded default database: the directory's three networks trained on it "  \
    "(make lmm-train); refused at startup unless they fit its skeleton and features (default none).")          \
  X("max-databases", NUMBER, max_databases, "64", 1, 64, LIVE, "N", DEFAULT, NULL,                               \
    "Databases loaded at once.")                                                                                \
  X("max-database-memory", NUMBER, max_database_memory, "0", 0, SRV_OPTION_64TIB, LIVE, "N", DEFAULT, NULL,      \
    "Bytes all databases may take (poses, features, search indexes); 0: no limit.")                             \
  X("max-graph-memory", NUMBER, max_graph_memory, "0", 0, SRV_OPTION_64TIB, LIVE, "N", DEFAULT, NULL,            \
    "Bytes motion graphs may take: the graphs kept (one per database) and a build's peak (the frames' point "   \
    "clouds, a strip's scratch, the distance picture), estimated from the build's sizes; a build_graph that "   \
    "would pass it is refused with ERROR_LIMIT before it allocates. 0: no limit.")                              \
  S("limits per request and connection")                                                                         \
  X("max-frame-bytes", NUMBER, max_frame_bytes, "4194304", 64, 268435456, LIVE, "N", DEFAULT, NULL,              \
    "Largest request frame in bytes.")                                                                          \
  X("decode-budget-bytes", NUMBER, decode_budget_bytes, "16777216", 64, 17179869184.0, LIVE, "N", DEFAULT, NULL, \
    "Memory one request's decode may allocate; at least max-frame-bytes.")                                      \
  X("max-connections", NUMBER, max_connections, "10000", 1, 1000000, LIVE, "N", DEFAULT, NULL,                   \
    "Simultaneous connections (keep LimitNOFILE above it).")                                                    \
  X("max-in-flight", NUMBER, max_in_flight, "256", 1, 1000000, LIVE, "N", DEFAULT, NULL,                         \
    "Requests in flight per connection.")                                                                       \
  X("max-batch", NUMBER, max_batch, "4096", 1, 1000000, LIVE, "N", DEFAULT, NULL,                                \
    "Queries per batch_search.")                                                                                \
  X("max-pose-frames", NUMBER, max_pose_frames, "10000", 1, 1000000, LIVE, "N", DEFAULT, NULL,                   \
    "Frames per pose request.")                                                                                 \
  X("max-ids", NUMBER, max_ids_per_request, "100000", 1, 10000000, LIVE, "N", DEFAULT, NULL,                     \
    "Characters, placements or inputs in one request.")                                                         \
  X("output-soft-limit", NUMBER, output_soft_limit, "8388608", 1, SRV_OPTION_TIB, LIVE, "N", DEFAULT, NULL,      \
    "Queued output bytes at which reading a connection pauses (the client must read its answers first).")       \
  X("output-hard-limit", NUMBER, output_hard_limit, "67108864", 1, SRV_OPTION_TIB, LIVE, "N", DEFAULT, NULL,     \
    "Output bytes queued or held for a connection at which it is closed (a subscriber closed so counts in "     \
    "slow_subscribers_closed).")                                                                                \
  X("max-output-memory", NUMBER, max_output_memory, "1073741824", 0, SRV_OPTION_64TIB, LIVE, "N", DEFAULT, NULL, \
    "Output bytes queued or held for all connections together; above it slow subscribers are closed. "          \
    "0: no limit.")                                                                                             \
  X("idle-timeout", REAL, idle_timeout, "0", 0, 31536000, LIVE, "S", DEFAULT, NULL,                              \
    "Close connections idle this many seconds; 0: never.")                                                      \
  S("characters and streams")                                                                                    \
  X("tick-rate", REAL, tick_rate, "60", 1, 1000, RESTART, "HZ", DEFAULT, NULL,                                   \
    "Character ticks per second.")                                                                              \
  X("fixed-step", ON, fixed_step, "0", 0, 0, RESTART, "", COMMENT, "",                                           \
    "Serve every tick deadline in turn with one period's dt, however late: a server behind its deadlines runs "  \
    "slower than wall time instead of folding the ones it missed into one longer tick. Streams are then the "    \
    "same from run to run (replays, tests); without it a late tick catches up with wall time.")                 \
  X("max-characters", NUMBER, max_characters, "100000", 1, 10000000, LIVE, "N", DEFAULT, NULL,                   \
    "Characters on this instance.")                                                                             \
  X("max-characters-per-connection", NUMBER, max_characters_per_connection, "20000", 1, 10000000, LIVE, "N",     \
    DEFAULT, NULL, "Characters one connection may own.")                                                        \
  X("max-history-seconds", REAL, max_history_seconds, "60", 0.1, 600, LIVE, "S", DEFAULT, NULL,                  \
    "Longest history a character may keep (set_history: its recent ticks, candidates and poses, for the "      \
    "debugger).")                                                                                               \
  X("max-history-memory", NUMBER, max_history_memory, "268435456", 0, SRV_OPTION_64TIB, LIVE, "N", DEFAULT,      \
    NULL, "Bytes all characters' histories may take; a set_history that would pass it is refused with "         \
    "ERROR_LIMIT before it allocates. 0: no limit.")                                                            \
  X("max-history-memory-per-connection", NUMBER, max_history_memory_per_connection, "67108864", 0,               \
    SRV_OPTION_64TIB, LIVE, "N", DEFAULT, NULL,                                                                 \
    "Bytes the histories of one connection's characters may take (ERROR_LIMIT past it). 0: no limit.")          \
  X("stream-soft-limit", NUMBER, stream_soft_limit, "1048576", 1, SRV_OPTION_TIB, LIVE, "N", DEFAULT, NULL,      \
    "Queued bytes above which pose frames are replaced, newest wins (when not given: half the output hard "     \
    "limit if that is smaller).")                                                                               \
  X("stream-soft-seconds", REAL, stream_soft_seconds, "10", 0.001, 86400, LIVE, "S", DEFAULT, NULL,              \
    "A subscriber above the stream soft limit this long is closed.")                                            \
  X("lod-search-scale", NUMBER, lod_search_scale, "1", 1, 16, LIVE, "N", DEFAULT, NULL,                         \
    "Level of detail: a motion-matching character no subscription streams at full rate this tick (named or "   \
    "owned at rate_divisor 1, or in a region band of divisor 1) searches periodically this many times less "     \
    "often (searches forced by an input change or a clip's end still happen at once). 1: off.")                 \
  X("pool-nice", NUMBER, pool_nice, "5", 0, 19, RESTART, "N", DEFAULT, NULL,                                     \
    "The thread pool's nice value above the loop thread's: the loop, which answers requests and writes "        \
    "streams, does not wait behind the tick's jobs for a core.")                                                \
  S("metrics and readiness")                                                                                     \
  X("metrics-port", NUMBER, metrics_port, "-1", -1, 65535, RESTART, "N", COMMENT, "9100",                        \
    "Prometheus metrics and GET /ready, /live over HTTP on this port; 0: an ephemeral one, -1: none.")            \
  X("metrics-host", TEXT, metrics_host, "127.0.0.1", 0, 0, RESTART, "ADDR", DEFAULT, NULL,                       \
    "Metrics listen address.")                                                                                  \
  S("logging")                                                                                                   \
  X("log-level", LEVEL, log_level, "info", 0, 0, LIVE, "LEVEL", DEFAULT, NULL,                                   \
    "debug, info, warn or error; the log goes to stderr (the journal).")                                        \
  S("the config file")                                                                                           \
  X("config", CONFIG, config_path, NULL, 0, 0, RESTART, "FILE", NONE, NULL,                                      \
    "Settings from this file, one \"name value\" line each with the flag's name; read first, so flags override it; " \
    "SIGHUP reads it again.")

typedef enum {
  SRV_OPTION_SECTION, /* an S(heading) row */
  SRV_OPTION_NUMBER,
  SRV_OPTION_REAL,
  SRV_OPTION_TEXT,
  SRV_OPTION_TOKEN,
  SRV_OPTION_TOKEN_FILE,
  SRV_OPTION_ON,
  SRV_OPTION_OFF,
  SRV_OPTION_LIST,
  SRV_OPTION_LEVEL,
  SRV_OPTION_CONFIG,
} srv_option_kind_t;

typedef enum { SRV_OPTION_LIVE, SRV_OPTION_RESTART } srv_option_reload_t;
typedef enum { SRV_OPTION_DEFAULT, SRV_OPTION_SET, SRV_OPTION_COMMENT, SRV_OPTION_NONE } srv_option_example_t;

/* One row of the table, as data. */
typedef struct {
  const char *name;          /* NULL for a section row (help holds its heading) */
  srv_option_kind_t kind;
  size_t offset, size;       /* the field in srv_config_t */
  int is_signed;             /* an int field (a NUMBER may be negative) */
  const char *default_text;
  double min, max;
  srv_option_reload_t reload;
  const char *arg;
  srv_option_example_t example;
  const char *example_text;
  const char *help;
} srv_option_t;

/* The table's rows, sections included, in order. */
extern const srv_option_t srv_options[];
extern const int srv_noptions;

/* The row named name (without dashes), or NULL. */
const srv_option_t *srv_option_find(const char *name);

#endif
