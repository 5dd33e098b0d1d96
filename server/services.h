/*
 * services.h: the service steps, one file per area (service_session.c,
 * service_database.c, service_search.c), gathered in the table of service.c.
 */
#ifndef SRV_SERVICES_H
#define SRV_SERVICES_H

#include "service.h"

int srv_session_hello(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_session_ping(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);

/* Opens data_dir/NAME.animdb as a registry entry (any thread). 0 or an
 * ANIM_E* code with a message in err. */
struct srv_db_entry;
int srv_database_open(const srv_config_t *config, const char *name, struct srv_db_entry **out_entry, char *err,
                       int errlen);

int srv_database_list(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
/* prepare for describe, unload, search, pose: takes a reference to the named database. */
int srv_database_acquire(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_database_describe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_database_check_absent(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_database_read_file(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_database_install(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_database_unload(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_database_always_off_loop(const srv_request_t *request, const srv_response_t *prepared);

int srv_search_handle(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_search_off_loop(const srv_request_t *request, const srv_response_t *prepared);
int srv_pose_handle(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_pose_off_loop(const srv_request_t *request, const srv_response_t *prepared);

/* prepare for the inertialization requests: a database reference when a frame is named. */
int srv_inertialize_prepare(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_inertialize_transition(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_inertialize_evaluate(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_transition_cost_handle(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_spring_tune_handle(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);

/* Characters and streams (service_character.c): loop thread, between ticks. */
int srv_character_create(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_character_destroy(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_character_set_inputs(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_character_state(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_character_subscribe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_character_update_subscription(const srv_service_ctx_t *ctx, const srv_request_t *request,
                                       srv_response_t *response);
int srv_character_unsubscribe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
/* Marks the server for a graceful shutdown once this answer is out (an admin request). */
int srv_session_shutdown(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);
int srv_server_stats_handle(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);

#endif
