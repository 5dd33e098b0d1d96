/* service.c: the dispatch table and the release of what responses hold. */
#include <stdlib.h>
#include "registry.h"
#include "services.h"

static const anim_service_t services[ANIM_REQUEST_TYPE_COUNT] = {
    [ANIM_REQUEST_HELLO] = {"hello", NULL, anim_session_hello, NULL, NULL, 0},
    [ANIM_REQUEST_PING] = {"ping", NULL, anim_session_ping, NULL, NULL, 0},
    [ANIM_REQUEST_LIST_DATABASES] = {"list_databases", NULL, anim_database_list, NULL, NULL, 0},
    [ANIM_REQUEST_DESCRIBE_DATABASE] = {"describe_database", anim_database_acquire, anim_database_describe, NULL, NULL, 0},
    [ANIM_REQUEST_LOAD_DATABASE] = {"load_database", anim_database_check_absent, anim_database_read_file,
                                    anim_database_install, anim_database_always_off_loop, 0, 1},
    [ANIM_REQUEST_RELOAD_DATABASE] = {"reload_database", anim_database_acquire, anim_database_read_file,
                                      anim_database_install, anim_database_always_off_loop, 0, 1},
    [ANIM_REQUEST_UNLOAD_DATABASE] = {"unload_database", anim_database_acquire, anim_database_unload, NULL, NULL, 0, 1},
    [ANIM_REQUEST_SEARCH] = {"search", anim_database_acquire, anim_search_handle, NULL, anim_search_off_loop, 0},
    [ANIM_REQUEST_BATCH_SEARCH] = {"batch_search", anim_database_acquire, anim_search_handle, NULL,
                                   anim_search_off_loop, 0},
    [ANIM_REQUEST_POSE] = {"pose", anim_database_acquire, anim_pose_handle, NULL, anim_pose_off_loop, 0},
    [ANIM_REQUEST_INERTIALIZE_TRANSITION] = {"inertialize_transition", anim_inertialize_prepare,
                                             anim_inertialize_transition, NULL, NULL, 0},
    [ANIM_REQUEST_INERTIALIZE_EVALUATE] = {"inertialize_evaluate", anim_inertialize_prepare, anim_inertialize_evaluate,
                                           NULL, NULL, 0},
    [ANIM_REQUEST_TRANSITION_COST] = {"transition_cost", anim_inertialize_prepare, anim_transition_cost_handle, NULL,
                                      NULL, 0},
    [ANIM_REQUEST_SPRING_TUNE] = {"spring_tune", NULL, anim_spring_tune_handle, NULL, NULL, 0},
    [ANIM_REQUEST_CREATE_CHARACTERS] = {"create_characters", anim_database_acquire, anim_character_create, NULL, NULL, 1},
    [ANIM_REQUEST_DESTROY_CHARACTERS] = {"destroy_characters", NULL, anim_character_destroy, NULL, NULL, 1},
    [ANIM_REQUEST_SET_INPUTS] = {"set_inputs", NULL, anim_character_set_inputs, NULL, NULL, 1},
    [ANIM_REQUEST_CHARACTER_STATE] = {"character_state", NULL, anim_character_state, NULL, NULL, 1},
    [ANIM_REQUEST_SUBSCRIBE] = {"subscribe", NULL, anim_character_subscribe, NULL, NULL, 1},
    [ANIM_REQUEST_UPDATE_SUBSCRIPTION] = {"update_subscription", NULL, anim_character_update_subscription, NULL, NULL, 1},
    [ANIM_REQUEST_UNSUBSCRIBE] = {"unsubscribe", NULL, anim_character_unsubscribe, NULL, NULL, 1},
    [ANIM_REQUEST_SERVER_STATS] = {"server_stats", NULL, anim_server_stats_handle, NULL, NULL, 0},
    [ANIM_REQUEST_SHUTDOWN] = {"shutdown", NULL, anim_session_shutdown, NULL, NULL, 0, 1},
};

const anim_service_t *anim_service_for(anim_request_type_t type) {
  return (unsigned)type < ANIM_REQUEST_TYPE_COUNT ? &services[type] : NULL;
}

void anim_response_release(anim_response_t *response) {
  if (response->type == ANIM_REQUEST_SEARCH || response->type == ANIM_REQUEST_BATCH_SEARCH) {
    for (int i = 0; i < response->body.search.nresults; i++) free(response->body.search.results[i].hits);
    free(response->body.search.results);
    response->body.search.results = NULL;
    response->body.search.nresults = 0;
  }
  if (response->type == ANIM_REQUEST_INERTIALIZE_TRANSITION || response->type == ANIM_REQUEST_INERTIALIZE_EVALUATE) {
    free(response->body.inertialize.block);
    response->body.inertialize.block = NULL;
  }
  if (response->type == ANIM_REQUEST_CREATE_CHARACTERS) {
    free(response->body.create.ids);
    response->body.create.ids = NULL;
  }
  if (response->type == ANIM_REQUEST_CHARACTER_STATE) {
    free(response->body.state.inertializer.block);
    response->body.state.inertializer.block = NULL;
  }
  if (response->type == ANIM_REQUEST_TRANSITION_COST) {
    free(response->body.cost.block);
    response->body.cost.block = NULL;
  }
  anim_db_entry_release(response->entry);
  anim_db_entry_release(response->built);
  response->entry = response->built = NULL;
}
