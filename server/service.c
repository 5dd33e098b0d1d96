/* service.c: the dispatch table and the release of what responses hold. */
#include <stdlib.h>
#include "registry.h"
#include "services.h"

static const srv_service_t services[SRV_REQ_COUNT] = {
    [SRV_REQ_HELLO] = {"hello", NULL, srv_session_hello, NULL, NULL, 0},
    [SRV_REQ_PING] = {"ping", NULL, srv_session_ping, NULL, NULL, 0},
    [SRV_REQ_LIST_DATABASES] = {"list_databases", NULL, srv_database_list, NULL, NULL, 0},
    [SRV_REQ_DESCRIBE_DATABASE] = {"describe_database", srv_database_acquire, srv_database_describe, NULL, NULL, 0},
    [SRV_REQ_LOAD_DATABASE] = {"load_database", srv_database_check_absent, srv_database_read_file,
                                    srv_database_install, srv_database_always_off_loop, 0, 1},
    [SRV_REQ_RELOAD_DATABASE] = {"reload_database", srv_database_acquire, srv_database_read_file,
                                      srv_database_install, srv_database_always_off_loop, 0, 1},
    [SRV_REQ_UNLOAD_DATABASE] = {"unload_database", srv_database_acquire, srv_database_unload, NULL, NULL, 0, 1},
    [SRV_REQ_SEARCH] = {"search", srv_database_acquire, srv_search_handle, NULL, srv_search_off_loop, 0},
    [SRV_REQ_BATCH_SEARCH] = {"batch_search", srv_database_acquire, srv_search_handle, NULL,
                                   srv_search_off_loop, 0},
    [SRV_REQ_POSE] = {"pose", srv_database_acquire, srv_pose_handle, NULL, srv_pose_off_loop, 0},
    [SRV_REQ_INERTIALIZE_TRANSITION] = {"inertialize_transition", srv_inertialize_prepare,
                                             srv_inertialize_transition, NULL, NULL, 0},
    [SRV_REQ_INERTIALIZE_EVALUATE] = {"inertialize_evaluate", srv_inertialize_prepare, srv_inertialize_evaluate,
                                           NULL, NULL, 0},
    [SRV_REQ_TRANSITION_COST] = {"transition_cost", srv_inertialize_prepare, srv_transition_cost_handle, NULL,
                                      NULL, 0},
    [SRV_REQ_SPRING_TUNE] = {"spring_tune", NULL, srv_spring_tune_handle, NULL, NULL, 0},
    [SRV_REQ_CREATE_CHARACTERS] = {"create_characters", srv_database_acquire, srv_character_create, NULL, NULL, 1},
    [SRV_REQ_DESTROY_CHARACTERS] = {"destroy_characters", NULL, srv_character_destroy, NULL, NULL, 1},
    [SRV_REQ_SET_INPUTS] = {"set_inputs", NULL, srv_character_set_inputs, NULL, NULL, 1},
    [SRV_REQ_CHARACTER_STATE] = {"character_state", NULL, srv_character_state, NULL, NULL, 1},
    [SRV_REQ_SUBSCRIBE] = {"subscribe", NULL, srv_character_subscribe, NULL, NULL, 1},
    [SRV_REQ_UPDATE_SUBSCRIPTION] = {"update_subscription", NULL, srv_character_update_subscription, NULL, NULL, 1},
    [SRV_REQ_UNSUBSCRIBE] = {"unsubscribe", NULL, srv_character_unsubscribe, NULL, NULL, 1},
    [SRV_REQ_SERVER_STATS] = {"server_stats", NULL, srv_server_stats_handle, NULL, NULL, 0},
    [SRV_REQ_SHUTDOWN] = {"shutdown", NULL, srv_session_shutdown, NULL, NULL, 0, 1},
};

const srv_service_t *srv_service_for(srv_request_type_t type) {
  return (unsigned)type < SRV_REQ_COUNT ? &services[type] : NULL;
}

void srv_response_release(srv_response_t *response) {
  if (response->type == SRV_REQ_SEARCH || response->type == SRV_REQ_BATCH_SEARCH) {
    for (int i = 0; i < response->body.search.nresults; i++) free(response->body.search.results[i].hits);
    free(response->body.search.results);
    response->body.search.results = NULL;
    response->body.search.nresults = 0;
  }
  if (response->type == SRV_REQ_INERTIALIZE_TRANSITION || response->type == SRV_REQ_INERTIALIZE_EVALUATE) {
    free(response->body.inertialize.block);
    response->body.inertialize.block = NULL;
  }
  if (response->type == SRV_REQ_CREATE_CHARACTERS) {
    free(response->body.create.ids);
    response->body.create.ids = NULL;
  }
  if (response->type == SRV_REQ_CHARACTER_STATE) {
    free(response->body.state.inertializer.block);
    response->body.state.inertializer.block = NULL;
  }
  if (response->type == SRV_REQ_TRANSITION_COST) {
    free(response->body.cost.block);
    response->body.cost.block = NULL;
  }
  srv_db_entry_release(response->entry);
  srv_db_entry_release(response->built);
  response->entry = response->built = NULL;
}
