/*
 * request_database.h: bodies of the database requests: list, describe,
 * load, reload, unload (see request.h). The name a request gives is in
 * srv_request_t.database; describe, load, reload and unload answer from the
 * entry the response holds.
 *
 * What it does not: check or run them (codec_database.c, service_database.c).
 */
#ifndef SRV_REQUEST_DATABASE_H
#define SRV_REQUEST_DATABASE_H

#include <stddef.h>
#include <stdint.h>
#include "registry.h"

typedef srv_no_body_t srv_list_databases_request_t;
typedef srv_no_body_t srv_describe_database_request_t;
typedef srv_no_body_t srv_load_database_request_t;
typedef srv_no_body_t srv_reload_database_request_t;
typedef srv_no_body_t srv_unload_database_request_t;

typedef struct {
  srv_db_summary_t *summaries; /* response-owned copies: encoding reads no registry */
  int count;
} srv_list_databases_response_t;

typedef srv_no_body_t srv_describe_database_response_t;
typedef srv_no_body_t srv_load_database_response_t;
typedef srv_no_body_t srv_reload_database_response_t;
typedef srv_no_body_t srv_unload_database_response_t;

#endif
