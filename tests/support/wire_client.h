/*
 * wire_client.h: a test client written from the proto alone: Request
 * messages built with protobuf-c, sent on a raw socket, ServerMessages
 * read back (answers and stream frames in the order they came). For the
 * requests the client library does not have yet, and for tests that read
 * stream fields it does not decode.
 */
#ifndef ANIM_TEST_WIRE_CLIENT_H
#define ANIM_TEST_WIRE_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include "animserver.pb-c.h"
#include "server_proc.h"

#include "raw_client.h"

/* The raw client (raw_client.h), each step failing the test instead of
 * returning an error. */
typedef anim_test_raw_t anim_wire_t;

/* Connects to server; fails the running test when it cannot. */
void anim_wire_open(anim_wire_t *wire, const anim_test_server_t *server);
void anim_wire_close(anim_wire_t *wire);

/* Sends request, giving it the next id (returned). */
uint64_t anim_wire_send(anim_wire_t *wire, Animserver__Request *request);
/* The next message within timeout_ms (fails the test after it). Free with
 * animserver__server_message__free_unpacked(m, NULL). */
Animserver__ServerMessage *anim_wire_next(anim_wire_t *wire, int timeout_ms);
/* Sends request and returns its answer, dropping stream frames that come
 * first. Free with anim_wire_free. */
Animserver__ServerMessage *anim_wire_call(anim_wire_t *wire, Animserver__Request *request, int timeout_ms);
/* As anim_wire_call, and fails the test unless the answer is not an error. */
Animserver__ServerMessage *anim_wire_ok(anim_wire_t *wire, Animserver__Request *request, int timeout_ms);
/* As anim_wire_call, and fails the test unless the answer is an error of
 * code whose message contains `contains`. */
void anim_wire_expect_error(anim_wire_t *wire, Animserver__Request *request, int code, const char *contains);
void anim_wire_free(Animserver__ServerMessage *message);

#endif
