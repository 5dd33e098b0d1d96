/*
 * stream_reader.c: the C side of python/bench/throughput.py's stream workload.
 *
 *   stream_reader HOST PORT CHARACTERS SECONDS float|quantized
 *
 * Creates CHARACTERS characters walking (stick 0, 0.8), subscribes to them in
 * the given encoding and reads frames through the client library's queue
 * (anim_client_next_frame: every pose decoded to floats) for SECONDS, touching
 * each root position. Prints one JSON line: frames, poses, client-dropped
 * frames, wall and CPU seconds of this process from the first frame on. What
 * it does not do: anything with the poses beyond reading them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "anim_client.h"

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static double wall_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: stream_reader HOST PORT CHARACTERS SECONDS float|quantized\n");
    return 2;
  }
  int n = atoi(argv[3]);
  double seconds = atof(argv[4]);
  int encoding = strcmp(argv[5], "quantized") == 0 ? ANIM_POSE_QUANTIZED : ANIM_POSE_FLOAT;
  int err;
  anim_client_t *client = anim_client_connect(argv[1], atoi(argv[2]), NULL, &err);
  if (!client) {
    fprintf(stderr, "stream_reader: %s\n", anim_strerror(err));
    return 1;
  }
  uint64_t *ids = calloc((size_t)n, sizeof *ids);
  anim_character_placement_t *place = calloc((size_t)n, sizeof *place);
  anim_character_input_t *in = calloc((size_t)n, sizeof *in);
  for (int i = 0; i < n; i++) {
    place[i] = (anim_character_placement_t){(float)(i % 32) * 2.0f, (float)(i / 32) * 2.0f, 0.0f, -1};
    anim_character_input_stick(&in[i], 0.0f, 0.8f, 0.0f, 0);
  }
  anim_subscribe_options_t sub = {NULL, 0, 1, 1, encoding, 0, 0};
  float tick_rate = 60.0f;
  if ((err = anim_client_characters_create(client, "default", NULL, place, n, ids, 10000)) ||
      (err = anim_client_characters_set_input(client, ids, in, n, NULL, 10000)) ||
      (err = anim_client_subscribe(client, &sub, NULL, NULL, NULL, &tick_rate, 10000))) {
    fprintf(stderr, "stream_reader: setup: %s: %s\n", anim_strerror(err), anim_client_last_error(client));
    return 1;
  }
  long frames = 0, poses = 0;
  uint64_t dropped = 0;
  double sum = 0.0, wall0 = 0.0, cpu0 = 0.0;
  long want = (long)(seconds * tick_rate + 0.5);
  while (frames < want) {
    anim_stream_frame_t *frame;
    if ((err = anim_client_next_frame(client, &frame, 5000)) != 0) {
      fprintf(stderr, "stream_reader: %s\n", anim_strerror(err));
      return 1;
    }
    if (frames == 0) wall0 = wall_seconds(), cpu0 = cpu_seconds();
    for (int i = 0; i < frame->nposes; i++) sum += frame->poses[i].positions[0];
    poses += frame->nposes;
    dropped = frame->client_dropped;
    frames++;
    anim_stream_frame_free(frame);
  }
  printf("{\"frames\":%ld,\"poses\":%ld,\"client_dropped\":%llu,\"wall_s\":%.3f,\"cpu_s\":%.3f,\"checksum\":%.3f}\n",
         frames - 1, poses - n, (unsigned long long)dropped, wall_seconds() - wall0, cpu_seconds() - cpu0, sum);
  anim_client_close(client);
  free(ids), free(place), free(in);
  return 0;
}
