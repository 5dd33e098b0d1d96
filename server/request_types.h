/*
 * request_types.h: the one list of request types.
 *
 * Every request the server answers is one row here, as redis generates its
 * command table from one list and anim_error.h its error codes:
 *
 *   X(TYPE, name, Message)
 *
 *   TYPE     the enum suffix (SRV_REQ_TYPE) and the suffix of the protobuf
 *            oneof case (ANIMSERVER__REQUEST__BODY_TYPE);
 *   name     the Request oneof field, the metrics label and log name, and
 *            the stem of what the layers above provide for the type:
 *            srv_name_request_t / srv_name_response_t (request.h's area
 *            headers), srv_decode_name / srv_encode_name (codec_*.c) and
 *            srv_service_name (service_*.c);
 *   Message  the protobuf message stem: Animserver__MessageRequest.
 *
 * From this list come the request enum, the names, the union of request and
 * response bodies, the codec's decode and encode dispatch, the service
 * table and the metrics labels. Adding a request is: its proto message, one
 * row here, its body types, its decode and encode functions, its service,
 * and a client function. The order is the enum's, nothing else; the wire
 * uses the proto's field numbers.
 */
#ifndef SRV_REQUEST_TYPES_H
#define SRV_REQUEST_TYPES_H

#define SRV_REQUEST_TYPES(X)                                               \
  X(HELLO, hello, Hello)                                                   \
  X(PING, ping, Ping)                                                      \
  X(LIST_DATABASES, list_databases, ListDatabases)                         \
  X(DESCRIBE_DATABASE, describe_database, DescribeDatabase)                \
  X(LOAD_DATABASE, load_database, LoadDatabase)                            \
  X(RELOAD_DATABASE, reload_database, ReloadDatabase)                      \
  X(UNLOAD_DATABASE, unload_database, UnloadDatabase)                      \
  X(SEARCH, search, Search)                                                \
  X(BATCH_SEARCH, batch_search, BatchSearch)                               \
  X(POSE, pose, Pose)                                                      \
  X(ALIGN, align, Align)                                                   \
  X(FIT_POSE, fit_pose, FitPose)                                           \
  X(INERTIALIZE_TRANSITION, inertialize_transition, InertializeTransition) \
  X(INERTIALIZE_EVALUATE, inertialize_evaluate, InertializeEvaluate)       \
  X(TRANSITION_COST, transition_cost, TransitionCost)                      \
  X(SPRING_TUNE, spring_tune, SpringTune)                                  \
  X(CREATE_CHARACTERS, create_characters, CreateCharacters)                \
  X(DESTROY_CHARACTERS, destroy_characters, DestroyCharacters)             \
  X(SET_INPUTS, set_inputs, SetInputs)                                     \
  X(CHARACTER_STATE, character_state, CharacterState)                      \
  X(SUBSCRIBE, subscribe, Subscribe)                                       \
  X(UPDATE_SUBSCRIPTION, update_subscription, UpdateSubscription)          \
  X(UNSUBSCRIBE, unsubscribe, Unsubscribe)                                 \
  X(SET_TRACKERS, set_trackers, SetTrackers)                               \
  X(SERVER_STATS, server_stats, ServerStats)                               \
  X(SHUTDOWN, shutdown, Shutdown)                                          \
  X(LOAD_MACHINE, load_machine, LoadMachine)                               \
  X(CHECK_MACHINE, check_machine, CheckMachine)                            \
  X(LIST_MACHINES, list_machines, ListMachines)                            \
  X(UNLOAD_MACHINE, unload_machine, UnloadMachine)                         \
  X(SEND_EVENTS, send_events, SendEvents)                                  \
  X(SET_PARAMS, set_params, SetParams)                                     \
  X(BUILD_GRAPH, build_graph, BuildGraph)                                  \
  X(DESCRIBE_GRAPH, describe_graph, DescribeGraph)                         \
  X(QUERY_GRAPH, query_graph, QueryGraph)                                  \
  X(SET_PATHS, set_paths, SetPaths)                                        \
  X(INVERSE_DYNAMICS, inverse_dynamics, InverseDynamics)                    \
  X(PUSH, push, Push)                                                      \
  X(SET_BODY_MODES, set_body_modes, SetBodyModes)                          \
  X(RECOVER, recover, Recover)                                             \
  X(SET_HISTORY, set_history, SetHistory)                                  \
  X(CHARACTER_HISTORY, character_history, CharacterHistory)                \
  X(SET_CHARACTER_PARAMS, set_character_params, SetCharacterParams)      \
  X(MARKER_FIT, marker_fit, MarkerFit)

typedef enum {
#define SRV_REQ_ENUM(TYPE, name, Message) SRV_REQ_##TYPE,
  SRV_REQUEST_TYPES(SRV_REQ_ENUM)
#undef SRV_REQ_ENUM
  SRV_REQ_COUNT /* also: "a frame that did not decode" where a type is counted */
} srv_request_type_t;

/* "hello", ...; "undecoded" for SRV_REQ_COUNT, "unknown" past it. */
const char *srv_request_name(int type);

#endif
