/*
 * anim_client.h: the animserver client library (umbrella header).
 *
 * Thin by design: libc sockets and protobuf-c, no libuv, no threads. The
 * API is split by area, each header usable through this one:
 *   anim_client_session.h      connect, close, reconnection, hello, ping, process/poll
 *   anim_client_database.h     databases, search, poses
 *   anim_client_inertialize.h  inertialization, transition cost, springs
 *   anim_client_character.h    characters: create (by mode), input, state, destroy
 *   anim_client_stream.h       subscriptions and pose frames
 *   anim_client_machine.h      action state machines: load, check, list, events, parameters
 *   anim_client_graph.h        motion graphs: build, describe, query, paths
 *   anim_client_fit.h          poses from tracked points: align, fit_pose, trackers
 *   anim_client_admin.h        server statistics, shutdown
 *
 * One mechanism: every request is a send with a typed completion callback,
 * anim_client_X_send(client, ..., cb, data, &id), which queues the request
 * and returns at once; cb(client, id, status, result..., data) runs when the
 * answer arrives (or the connection fails), once, from inside the library
 * (anim_client_process, anim_client_poll, or any blocking call). The
 * blocking form anim_client_X(client, ..., outputs, timeout_ms) is that send
 * plus a wait for that id; answers to other requests and stream frames that
 * arrive meanwhile go to their own callbacks, in the order they arrived.
 * Requests may be pipelined: answers are matched by id.
 *
 * A callback may call any function of the library, blocking ones included
 * (not anim_client_close): the reader hands out one message at a time, so a
 * nested wait goes on with the next message in order. Results passed to a
 * callback are valid during the callback only (NULL when status != 0); a
 * blocking call's results belong to its caller (freed with the *_free
 * function named next to their type).
 *
 * Every function returns 0 or a negative ANIM_E* code (anim_strerror
 * explains it); when the server answered with an error, that code is
 * returned and its message is in anim_client_last_error(). A callback never
 * runs for a request whose send returned an error. A client is not
 * thread-safe: use it from one thread.
 *
 * Ownership: anim_client_connect allocates; anim_client_close frees.
 */
#ifndef ANIM_CLIENT_H
#define ANIM_CLIENT_H

#include "anim_client_session.h"
#include "anim_client_database.h"
#include "anim_client_inertialize.h"
#include "anim_client_character.h"
#include "anim_client_stream.h"
#include "anim_client_machine.h"
#include "anim_client_graph.h"
#include "anim_client_fit.h"
#include "anim_client_admin.h"
#include "anim_client_dynamics.h"
#include "anim_client_physics.h"
#include "anim_client_history.h"
#include "anim_client_markers.h"

#endif
