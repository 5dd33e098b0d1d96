/* client_hello: say hello to an animserver, walk one character, print its root.
 *   cc client_hello.c $(pkg-config --cflags --libs animclient) && ./a.out [host [port]] */
#include <stdio.h>
#include <stdlib.h>
#include <animserver/anim_client.h>

int main(int argc, char **argv) {
  const char *host = argc > 1 ? argv[1] : "127.0.0.1";
  int port = argc > 2 ? atoi(argv[2]) : 7878, err;
  anim_client_t *client = anim_client_connect(host, port, NULL, &err);
  if (!client) { fprintf(stderr, "%s:%d: %s\n", host, port, anim_strerror(err)); return 1; }

  anim_hello_info_t info;
  uint64_t id;
  anim_character_input_t walk;
  anim_character_input_stick(&walk, 0.0f, 1.0f, 0.0f, 0); /* stick forward, camera at azimuth 0 */
  anim_subscribe_options_t sub = {.characters = &id, .ncharacters = 1, .rate_divisor = 12}; /* 5/s at 60 Hz */
  if ((err = anim_client_hello(client, "client_hello", &info, 5000)) == 0 &&
      (err = anim_client_characters_create(client, "default", NULL, NULL, 1, &id, 5000)) == 0 &&
      (err = anim_client_characters_set_input(client, &id, &walk, 1, NULL, 5000)) == 0 &&
      (err = anim_client_subscribe(client, &sub, NULL, NULL, NULL, NULL, 5000)) == 0)
    printf("server %s, character %llu\n", info.server_version, (unsigned long long)id);
  for (int i = 0; err == 0 && i < 10; i++) {
    anim_stream_frame_t *frame;
    if ((err = anim_client_next_frame(client, &frame, 5000)) != 0) break;
    if (frame->nposes > 0) { /* bone 0 of a pose: the root, in world space (metres) */
      const float *root = frame->poses[0].positions;
      printf("tick %llu root %.2f %.2f %.2f\n", (unsigned long long)frame->tick, root[0], root[1], root[2]);
    }
    anim_stream_frame_free(frame);
  }
  if (err) fprintf(stderr, "%s: %s\n", anim_strerror(err), anim_client_last_error(client));
  anim_client_close(client);
  return err ? 1 : 0;
}
