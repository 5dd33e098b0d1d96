/*
 * services.h: the service steps, one file per area (service_session.c,
 * service_database.c, service_search.c), gathered in the table of service.c.
 */
#ifndef ANIM_SERVICES_H
#define ANIM_SERVICES_H

#include "service.h"

int anim_session_hello(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_session_ping(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);

/* Opens data_dir/NAME.animdb as a registry entry (any thread). 0 or an
 * ANIM_E* code with a message in err. */
struct anim_db_entry;
int anim_database_open(const anim_config_t *config, const char *name, struct anim_db_entry **out_entry, char *err,
                       int errlen);

int anim_database_list(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
/* prepare for describe, unload, search, pose: takes a reference to the named database. */
int anim_database_acquire(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_database_describe(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_database_check_absent(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_database_read_file(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_database_install(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_database_unload(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_database_always_off_loop(const anim_request_t *request, const anim_response_t *prepared);

int anim_search_handle(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_search_off_loop(const anim_request_t *request, const anim_response_t *prepared);
int anim_pose_handle(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_pose_off_loop(const anim_request_t *request, const anim_response_t *prepared);

/* prepare for the inertialization requests: a database reference when a frame is named. */
int anim_inertialize_prepare(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_inertialize_transition(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_inertialize_evaluate(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_transition_cost_handle(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_spring_tune_handle(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);

/* Characters and streams (service_character.c): loop thread, between ticks. */
int anim_character_create(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_character_destroy(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_character_set_inputs(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_character_state(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_character_subscribe(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_character_update_subscription(const anim_service_ctx_t *ctx, const anim_request_t *request,
                                       anim_response_t *response);
int anim_character_unsubscribe(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
/* Marks the server for a graceful shutdown once this answer is out (an admin request). */
int anim_session_shutdown(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);
int anim_server_stats_handle(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *response);

#endif
