/*
 * request.h: a request and its response as plain C structs.
 *
 * The codec (codec.h) turns a protobuf Request into an srv_request_t,
 * checking everything that needs no server state (sizes, finiteness, string
 * syntax), and turns an srv_response_t into framed protobuf bytes; services
 * never see protobuf-c types. The bodies are declared per area
 * (request_<area>.h); the unions below have one member per row of
 * request_types.h, named after it.
 *
 * Lifetimes: strings, arrays and byte views in a request point into the
 * decoded message or the request's arena and live until srv_request_release
 * (codec.h). A response owns what it allocates through srv_response_alloc
 * and may hold a database reference; srv_response_release frees both. A
 * response carries everything its encoding reads (copies, or data of the
 * database it holds a reference to), so it can be encoded on any thread.
 */
#ifndef SRV_REQUEST_H
#define SRV_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include "request_types.h"

#define SRV_ERROR_MESSAGE_MAX 256

/* The body of a request or response that carries nothing. */
typedef struct {
  char unused;
} srv_no_body_t;

#include "request_session.h"
#include "request_database.h"
#include "request_search.h"
#include "request_inertialize.h"
#include "request_fit.h"
#include "request_character.h"
#include "request_machine.h"
#include "request_graph.h"
#include "request_dynamics.h"
#include "request_physics.h"
#include "request_history.h"
#include "request_markers.h"

struct srv_db_entry;
struct srv_fit_model;

typedef struct srv_request {
  uint64_t id;
  srv_request_type_t type;
  const char *database; /* the database the request names (a checked name), or NULL */
  const char *database_field; /* the field that named it: "database", "name" */
  union {
#define SRV_REQ_BODY(TYPE, name, Message) srv_##name##_request_t name;
    SRV_REQUEST_TYPES(SRV_REQ_BODY)
#undef SRV_REQ_BODY
  } body;
  void *decoded; /* the codec's message; owns what the views point to */
  void *budget;  /* the allocator state that decoded it (charges the arena too) */
  void *arena;   /* converted arrays, freed with the request */
  uint64_t received_ns; /* when the frame arrived (latency metrics) */
} srv_request_t;

/* What the dispatcher does once the answer is out (set by a service). */
enum { SRV_AFTER_SHUTDOWN = 1 };

typedef struct srv_response {
  uint64_t id;
  srv_request_type_t type;
  int error; /* 0, or an ANIM_E* code: then only message is sent */
  char message[SRV_ERROR_MESSAGE_MAX];
  struct srv_db_entry *entry; /* the database that answers (a reference) */
  struct srv_db_entry *built; /* a database built off the loop, installed by the finish step */
  struct srv_fit_model *fit_model; /* a pose-fit model reference (fit_pose, tracker characters) */
  unsigned after;             /* SRV_AFTER_* */
  /* Something made for the finish step or held for the work off the loop (a
   * parsed machine, a graph build, a graph reference): release_held(held)
   * on release, before the database references go. */
  void *held;
  void (*release_held)(void *held);
  void *arena;                /* blocks of srv_response_alloc */
  /* Memory lent by whoever holds the response (a read batch's slot), handed
   * out by srv_response_alloc before it allocates: a pipelined search then
   * answers without malloc, and without a free on another thread. The
   * lender owns it; the release only forgets it. */
  unsigned char *lent;
  size_t lent_size, lent_used;
  union {
#define SRV_RESP_BODY(TYPE, name, Message) srv_##name##_response_t name;
    SRV_REQUEST_TYPES(SRV_RESP_BODY)
#undef SRV_RESP_BODY
  } body;
} srv_response_t;

/* An empty response for request id of type (SRV_REQ_COUNT: of no type): the
 * header and the type's own body zeroed, not the whole union (kilobytes,
 * for the largest body). */
void srv_response_init(srv_response_t *response, uint64_t id, int type);

/* Sets response->error and a formatted message; returns code (for `return`). */
int srv_response_fail(srv_response_t *response, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* size zeroed bytes owned by the response (freed by srv_response_release),
 * or NULL when out of memory (the response is then failed with ANIM_ENOMEM).
 * From its lent memory while that has room. */
void *srv_response_alloc(srv_response_t *response, size_t size);

/* Frees the response's blocks and drops its database and model references. Loop thread
 * (references are counted there). */
void srv_response_release(srv_response_t *response);

#endif
