/*
 * animctl: command-line client of animserver, built on the client library.
 *
 *   animctl [--host H] [--port P] [--timeout MS] [--json] COMMAND [ARGS]
 *
 * One subcommand per request type; human-readable output by default, one
 * JSON object per result with --json. Exit status: 0 ok, 1 request failed
 * (or no server), 2 usage error. A command checks its arguments before it
 * connects (animctl_connect), so a usage error exits 2 whatever the server.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"

/* A command parses and checks its arguments, then connects (animctl_connect). */
typedef int (*command_fn)(const options_t *options, int argc, char **argv);

/* One entry per command: its synopsis (as the usage lists it) and what it
 * does, with the shape of its --json output; `animctl COMMAND --help` and
 * `animctl help COMMAND` print one, `animctl --help` every synopsis. */
typedef struct {
  const char *name;
  const char *synopsis; /* lines, each starting "  NAME" */
  const char *about;    /* what it does; --json: what it prints */
} command_help_t;

static const command_help_t help[] = {
    {"hello", "  hello                 handshake: protocol and server version, capabilities, limits\n",
     "Says hello and prints what the server answers: protocol and server version, capabilities, the limits a\n"
     "client can hit and this connection's id.\n"
     "--json: one object {protocol_version, server_version, capabilities: [...], limits: {max_frame_bytes,\n"
     "max_in_flight, max_batch, max_k, output_soft_limit_bytes, output_hard_limit_bytes, max_characters,\n"
     "max_characters_total, max_pose_frames, decode_budget_bytes, stream_soft_limit_bytes, max_subscriptions,\n"
     "max_ids, max_string_bytes, tick_rate, world_limit, max_trackers_ahead, max_trackers_waiting,\n"
     "max_push_ahead, max_pushes_pending, max_machines, max_machine_bytes, max_events_waiting,\n"
     "max_path_points, max_query_seconds, max_graph_builds, max_path_expansions, max_align_points,\n"
     "max_trackers, fit_models_per_database}, admin, connection_id}.\n"},
    {"stats", "  stats                 server counters: connections, requests, characters, ticks, streams\n",
     "Prints the server's counters: uptime, connections, requests and errors, characters, ticks (late,\n"
     "skipped; lateness and tick work p50/p99), stream frames sent and dropped, bytes, CPU and RSS.\n"
     "--json: one object {uptime_s, connections, requests, errors, characters, tick_rate, ticks, ticks_late,\n"
     "ticks_skipped, lateness_p50_us, lateness_p99_us, tick_work_p50_us, tick_work_p99_us, frames_sent,\n"
     "frames_dropped, stream_bytes, cpu_s, rss_bytes}.\n"},
    {"shutdown", "  shutdown              graceful shutdown (admin token)\n",
     "Asks the server to shut down: it stops accepting, drains what is in flight and exits. Needs the admin\n"
     "token (--auth-token, or the server's --admin-token).\n"
     "--json: one object {\"shutting_down\": true}.\n"},
    {"ping", "  ping [--count N]      round trips, with their times\n",
     "Sends N pings (default 1, at most 1000000) one after the other and prints each round trip's time.\n"
     "--json: one object per ping, a line each: {seq, rtt_us}.\n"},
    {"db",
     "  db list               loaded databases\n"
     "  db describe NAME      skeleton, ranges, feature schema\n"
     "  db load NAME | db reload NAME | db unload NAME\n",
     "list: every loaded database (name, version, frames, bones, rate, feature dims, ranges, memory).\n"
     "describe: one database's skeleton (bones and parents), ranges with their tags, feature schema.\n"
     "load / reload / unload: DATA_DIR/NAME.animdb on the server (admin token); reload swaps atomically.\n"
     "--json: list: an array of {name, version, frames, bones, frame_rate, feature_dims, ranges, memory_bytes, graph_memory_bytes};\n"
     "describe: {summary: {...as list}, bones: [{name, parent}], ranges: [{name, start, stop, tags}],\n"
     "features: [{kind, bone, weight, first_column, dims}]}; load, reload: the summary; unload: {unloaded}.\n"},
    {"search",
     "  search DB (--frame N | --features v1,v2,... [--raw] | "
     "--bone-position B=x,y,z ... --bone-velocity B=x,y,z ...)\n"
     "         [--trajectory-positions x,z,...] [--trajectory-directions x,z,...] [--k K] [--current F]\n"
     "         [--transition-cost C] [--ignore-range-end N] [--ignore-surrounding N]\n"
     "         [--tag T]... [--method brute|boxes|fast] [--explain] [--pose]\n",
     "Motion-matching search on database DB: the K nearest frames (default 1) to a query given as a frame's\n"
     "features, a feature vector (normalized, or --raw), or the bone positions and velocities and trajectory\n"
     "it is made of. --current F competes without --transition-cost; --ignore-* exclude range ends and\n"
     "frames near F; --tag keeps tagged ranges; --explain splits the best cost by feature group; --pose\n"
     "adds each match's local pose.\n"
     "--json: one object {database_version, matches: [{frame, range, range_name, cost, pose?}],\n"
     "explain?: [{group, cost}], margin?}.\n"},
    {"pose", "  pose DB FRAME [--count N] [--global] [--velocities]\n",
     "Frames FRAME .. FRAME+N-1 of database DB: local positions and rotations (w, x, y, z), with --global the\n"
     "global ones, with --velocities the velocities; and the contact flags.\n"
     "--json: one object per frame, a line each: {frame, local_positions, local_rotations, ...,\n"
     "global_positions?, ..., contacts}; flat arrays, 3 or 4 numbers a bone.\n"},
    {"inertialize", "  inertialize DB SRC_FRAME DST_FRAME [--halflife H] [--t T]\n",
     "An inertialized transition from database frame SRC_FRAME to DST_FRAME (half-life H s, default 0.1):\n"
     "each bone's offsets T seconds later (default 0: at the transition).\n"
     "--json: one object per bone, a line each: {bone, t, offset_position, offset_velocity, offset_rotation,\n"
     "offset_angular_velocity}.\n"},
    {"transition-cost", "  transition-cost DB SRC_FRAME DST_FRAME [--halflife H] [--bone NAME]...\n",
     "How far an inertialized transition from SRC_FRAME to DST_FRAME displaces the pose as its offsets decay\n"
     "(metre-seconds), exact and approximated, per bone (--bone: only those) and in total.\n"
     "--json: one object {exact, approximate, bones: [{bone, exact, approximate}]}.\n"},
    {"spring",
     "  spring halflife --alpha A --t T [--x0 X] [--v0 V] [--mass M]\n"
     "  spring erp-cfm --stiffness K --damping C [--dt DT]\n"
     "  spring gains --erp E --cfm C [--dt DT]\n",
     "halflife: the critically damped spring that leaves fraction A of the distance after T seconds (from\n"
     "offset X and velocity V); erp-cfm: a spring's gains as a physics engine's ERP and CFM at step DT; gains:\n"
     "the reverse.\n"
     "--json: one object {halflife, stiffness, damping, erp, cfm}.\n"},
    {"render",
     "  render DB FRAME [--count N] [--step S] [--view side|top] [-o FILE.svg]   stick-figure filmstrip\n"
     "  render --stream (--create N [--input SPEC] | --id ID...) [--character K] [--step S] [--view V]\n"
     "         [--frames N | --seconds S] [-o FILE.svg]   filmstrip of a character the server animates\n",
     "Draws a stick-figure filmstrip as SVG (to FILE, else stdout): N frames (default 120) of database DB\n"
     "from FRAME, every S-th (default 10); or, with --stream, characters the server animates (created here\n"
     "with an input SPEC as for stream, or existing ones by --id).\n"
     "--json: with -o, one object {file, poses}; without, the SVG itself.\n"},
    {"stream",
     "  stream (--create N [--database DB | --mode learned] [--input SPEC] | --id ID...) [--rate-divisor K]\n"
     "         [--encoding float|quantized] [--global] [--rotations-only] [--frames N | --seconds S]\n"
     "         [-o FILE.jsonl]   pose stream as JSON lines; SPEC: stick:X,Z velocity:VX,VZ\n"
     "         goal:X,Z[,SPEED] script:tour script:wander\n"
     "  stream --region circle:X,Z,R[:follow=ID|@K] | box:X,Z,HX,HZ[:follow=...] [--band R:DIV]...\n"
     "         [--max-characters N] [--create N ...]   whoever is inside a region, any connection's\n",
     "Creates N characters steered by SPEC (default stick:0,0.7, a walk at 1.2 m/s; stick:0,0 stands) (or\n"
     "watches existing ones by --id), subscribes to their poses and writes each frame received, for N frames\n"
     "(default 300) or S seconds, or until every --id character is gone (the frame whose \"gone\" says so is\n"
     "the last; exit 0).\n"
     "--region streams the characters inside a circle (radius R) or box (half-extents HX, HZ) of the ground\n"
     "plane centred on X,Z, or on the caller's character ID (follow=@K: the K-th --create one), any\n"
     "connection's, instead of --id; frames come only when they carry poses, arrivals or departures.\n"
     "--band R:DIV (up to 8, radii increasing): members up to R m from the centre get a pose every DIV ticks\n"
     "(past the last band, its rate); --max-characters N: only the nearest N. With --region, --seconds S is\n"
     "S seconds from subscribing (frames or none), not S seconds of frames.\n"
     "Output is JSON lines with or without --json: first {type: \"header\", database, tick_rate,\n"
     "subscription, bones, parents, contact_bones}, then one object per frame {tick, dropped, poses: [...]};\n"
     "with --region, \"entered\": [{id, database, database_version, bones}] and \"left\": [ids] when some\n"
     "came in (their poses are in that frame) or went out (walked out, past the cap, or destroyed).\n"},
    {"record",
     "  record (--create 1 [--database DB] [--input SPEC] | --id ID) [--rate-divisor K] [--frames N | --seconds S]\n"
     "         [--gltf FILE.glb|FILE.gltf] [--bvh FILE.bvh] [-o FILE.jsonl]   a character's motion as glTF and BVH\n"
     "  record --from FILE.jsonl [--id ID] [--gltf FILE] [--bvh FILE]   a recording file exported (no server)\n",
     "Records one character (created here and steered by SPEC as for stream, or an existing one by --id) for N\n"
     "frames (default 300) or S seconds and writes it: --gltf as glTF 2.0 (the database's bones and rest pose,\n"
     "a skin, one animation; metres, Y up), --bvh as BVH (centimetres, Y up, Euler ZXY), -o as the stream's\n"
     "JSON lines with world positions (the recording file). A character gone before its first frame: exit 1.\n"
     "--from exports a recording file (record -o, or stream -o; character ID, else the first) instead.\n"
     "--json: one object {character, frames, bones, frame_time, filled, database, gltf, bvh, recording}; filled:\n"
     "frames interpolated over ticks the server skipped (frame i is always first tick + i steps).\n"},
    {"machine",
     "  machine check FILE [--name N] [--database DB] | machine load FILE [--name N] [--replace]\n"
     "  machine list | machine unload NAME\n"
     "  machine attach NAME [--database DB] [--seconds S] [--event T:EVENT]... [--set T:PARAM=V]...\n"
     "         a character running the machine, scripted events and parameters, its state changes\n",
     "check: parses (and with --database binds) a state machine file without keeping it; every problem with\n"
     "its line and column (exit 1 when there is any). load: loads it under its file name or N (admin).\n"
     "list: the loaded machines. unload: drops one. attach: a character running machine NAME for S seconds,\n"
     "with events and parameters at the times given; prints each state change.\n"
     "--json: check: one object per problem, a line each {problem, line, column, message}, or the summary;\n"
     "load: the summary {name, version, source, states: [...], ...}; list: one summary a line each (none:\n"
     "no output); unload: nothing; attach: one object per state change {time, state_path}.\n"},
    {"graph",
     "  graph build DB [--threshold M] [--window S] [--keep-all] [--matrix N] [--slide auto|on|off]\n"
     "         --slide: pairs refused for node spacing slid onto a node; auto (default): on where\n"
     "         two clips repeat a motion exactly (procedural clips), off on captured motion\n"
     "  graph info DB [--transitions] [--svg FILE]   the graph; the distance matrix picture\n"
     "  graph path DB X,Z X,Z ... [--closed] [--seconds S] [--settle S]   a walk along a polyline\n"
     "         [--no-warm] [--no-bound] [--no-memory]   the planner without its seeds, its bound of\n"
     "         a walk's future, the lag carried from plan to plan (each on by default)\n",
     "build: builds database DB's motion graph on the server and waits for it. info: its status, nodes,\n"
     "edges, transitions (with --svg, a picture of the distance matrix kept by build --matrix). path: the\n"
     "walk a graph character would take along the polyline.\n"
     "--json: build, info: one object {status, progress, ready, frames, nodes, edges, transitions, ...};\n"
     "path: one object {steps, plans, arc, seconds, error_mean, ...}.\n"},
    {"history",
     "  history (--id ID | --create [--database DB] [--input SPEC] [--seconds S] [--keep S] [--candidates N])\n"
     "          [--last S | --ticks A:B] [--all] [--tick T|last]   a character's recent ticks and search candidates\n",
     "Prints a span of a character's history (the last S seconds, default 2, or ticks A..B): a row per searched\n"
     "tick (every tick with --all) with the frame shown, why it searched (periodic, replan, range-end), the\n"
     "frame chosen, whether it transitioned and the best candidates with their costs; --tick T: that tick's\n"
     "candidates with their cost by feature group (last: the newest searched tick). --id reads any character\n"
     "whose owner turned its history on; --create makes one here (SPEC: stick:X,Z or velocity:VX,VZ;\n"
     "default stick:0,0.7), keeps S seconds of history (--keep, default 5) with N candidates a search\n"
     "(default 8), steers it --seconds S (default 3) and prints. --json: one object {first_tick, last_tick, capacity, tick_rate, groups, ticks: [...]}.\n"},
    {"set-params",
     "  set-params [--database DB] [--input SPEC] [--seconds S] NAME=VALUE...   tune a character's parameters\n",
     "Makes a character (steered by SPEC as history --create), runs it S seconds (default 2), changes the named\n"
     "controller parameters (transition_cost=0.05 inertialize_halflife=0.2 ...: ControllerParams' names), runs\n"
     "it S seconds more and prints every parameter before and after, with searches and transitions a second in\n"
     "each half. A value out of range is refused, naming the parameter, and nothing is applied.\n"
     "The warps (docs/characters.md): no_play_rate, no_stand_warp, no_orientation_warp, no_stride_warp,\n"
     "no_root_steering =1 turns that warp off, =0 on again (a switch not named is kept); their bounds\n"
     "play_rate_min (0,1] play_rate_max [1,4] orientation_warp_max (0,pi] rad stride_scale_min (0,1]\n"
     "stride_scale_max [1,2] root_steering_max (0,1] (times the root's speed). Before and after print 1 for off.\n"
     "--json: one object {character, seconds, before, after, searches_per_second, transitions_per_second}.\n"},
    {"align", "  align --source x,y,z ... --target x,y,z ... [--weights w,...] [--mode rigid|similarity|yaw]\n",
     "The least-squares transform taking the source points onto the target points (at least 3, 2 for yaw).\n"
     "--json: one object {rotation (w, x, y, z), translation, scale, yaw, cost, rms}.\n"},
    {"fit", "  fit DB BONE=x,y,z[@vx,vy,vz] ...   a full-body pose from tracked bones\n",
     "A full-body pose of database DB's skeleton from a few tracked bone positions (and velocities).\n"
     "--json: one object {frame, scale, residuals, global_positions, ...}.\n"},
    {"inverse-dynamics",
     "  inverse-dynamics DB RANGE|START:STOP [--svg FILE] [--bones A,B,...] [--max-root-torque NM]\n"
     "         [--max-root-force N] [--contact-height M] [--contact-speed MS] [--mass KG] [--step K]\n"
     "  inverse-dynamics (--character ID | --create [--database DB] [--input SPEC] [--walk S])\n"
     "         (--seconds S | --ticks A:B) [--svg FILE] [the options above]   a character's recent motion\n",
     "The joint torques, the feet's ground reaction forces and the root's residual (hand of God) that move\n"
     "database DB's body model along a range (by name, or frames START:STOP), or along a character's last S\n"
     "seconds (or ticks A..B) as its history recorded them (the history must be on; only the character's\n"
     "own connection may ask, so --character ID answers for a character animctl made: --create makes one on\n"
     "DB, default \"default\", turns its history on, steers it by SPEC, default stick:0,0.7, for --walk\n"
     "seconds, default S + 1, then asks and destroys it). --svg: the vertical ground force under each foot\n"
     "with the residual over time, and the joint torque curves (--bones, default the six largest).\n"
     "--json: one object {frames, mean_vertical_force_share, mean_residual_force, ...; character,\n"
     "first_tick, ticks_filled for a character}.\n"},
    {"marker-fit",
     "  marker-fit DB CLIP.bvh [--markers BONE[:x,y,z],...] [--offset x,y,z] [--frames N] [--svg FILE]\n"
     "         [--jump MARKER:FRAME:METRES] [--scale S | --estimate-scale] [--marker-halflife S] [--prior-halflife S]\n",
     "A BVH clip's joints made into markers (each bone's joint plus the offset turned by the bone; default every\n"
     "bone below the hips, 3 cm off) and fitted back through database DB's body model in MuJoCo. Prints the mean\n"
     "and worst residuals and each marker's mean. --jump moves one marker up for one frame. --svg: each marker's\n"
     "residual over time (the eight worst). --json: one object {frames, markers, scale, mean_residual, ...}.\n"},
    {"push",
     "  push DB [--seconds S] [--walk X,Z] [--mass KG] EVENT...   a physical character pushed, weakened, dropped\n"
     "         EVENT: T:impulse:BONE:x,y,z[@px,py,pz] | T:force:BONE:x,y,z:SECONDS | T:limp:BONE[:SECONDS]\n"
     "                T:weaken:BONE:HALFLIFE[:SECONDS] | T:drop | T:recover   (T: seconds)\n",
     "Creates a physical character (MODE_PHYSICAL) on DB, standing or walking with the stick at X,Z, applies\n"
     "the events at their times (impulses in N s and forces in N, world axes, at a point in the bone's frame;\n"
     "limp and weaken act on the bone and every bone below it), and prints each change of its state\n"
     "(kinematic, powered, fallen, limp, recovering) with its joints' mean height. About 40 N s at the\n"
     "chest staggers a standing character; 300 N s makes it fall. --mass: its body's mass, kg in [20, 300]\n"
     "(default 70); a push moves a body of mass M as 70 / M of it moves the 70 kg one.\n"
     "--json: one object per state change {time, tick, state, height, lowest_before}.\n"},
    {"load",
     "  load [--connections N] [--pipeline P] [--duration S] [--rate R]\n"
     "       [--mix ping=W,search=W] [--database DB] [--k K] [--pose] [--library]   load generator:\n"
     "       raw frames packed once; answers checked by framing (id in flight, the body asked\n"
     "       for, errors counted); --pose: searches ask for their matches' poses;\n"
     "       --library decodes every answer with the client library\n",
     "A load generator: N connections each keeping P requests in flight for S seconds (or R requests a\n"
     "second), mixed as asked; prints the throughput and latency percentiles.\n"
     "--json: one object {connections, pipeline, rate, mix, duration_s, requests, errors, requests_per_s,\n"
     "p50_us, p99_us, p999_us, max_us, latency_from}.\n"},
};

#define OPTIONS_HELP                                                                                            \
  "options:\n"                                                                                                  \
  "  --host H       server address (default 127.0.0.1)\n"                                                      \
  "  --port P       server port (default 7878)\n"                                                              \
  "  --timeout MS   per-request timeout (default 5000)\n"                                                      \
  "  --json         machine-readable output (each command's --help says its shape); errors too: one line\n"   \
  "                 {\"error\": {...}} on stderr\n"                                                             \
  "  --auth-token T the server's auth token (default $ANIM_AUTH_TOKEN), sent in a hello first\n\n"            \
  "exit status: 0 ok, 1 the request failed (or the server could not be reached), 2 a usage error\n"

static void usage(FILE *out) {
  fprintf(out, "usage: animctl [--host H] [--port P] [--timeout MS] [--json] COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof help / sizeof help[0]; i++) fputs(help[i].synopsis, out);
  fprintf(out, "\n%s\nanimctl COMMAND --help (or animctl help COMMAND): what a command does and its --json output\n",
          OPTIONS_HELP);
}

static const command_help_t *help_find(const char *name) {
  for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
    if (!strcmp(help[i].name, name)) return &help[i];
  return NULL;
}

/* One command's help: its synopsis (the lines of "usage"), what it does, its --json output. */
static void command_usage(const command_help_t *h) {
  printf("usage: animctl [--host H] [--port P] [--timeout MS] [--json] %s ...\n\n%s\n%s\n%s", h->name, h->synopsis,
         h->about, OPTIONS_HELP);
}

static int json_errors; /* --json: errors as JSON too */

void animctl_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(out, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(out, "\\u%04x", *s);
    else fputc(*s, out);
  }
  fputc('"', out);
}

int animctl_fail(const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  if (json_errors) {
    fputs("{\"error\":{\"kind\":\"usage\",\"message\":", stderr);
    animctl_json_string(stderr, message);
    fputs("}}\n", stderr);
  } else {
    fprintf(stderr, "animctl: %s\n", message);
  }
  return 2;
}

int report_error(const char *what, int rc, anim_client_t *client) {
  const char *detail = client ? anim_client_last_error(client) : "";
  if (json_errors) {
    fputs("{\"error\":{\"kind\":\"request\",\"request\":", stderr);
    animctl_json_string(stderr, what);
    fprintf(stderr, ",\"code\":\"%s\",\"code_value\":%d,\"description\":", anim_err_name(rc), rc);
    animctl_json_string(stderr, anim_strerror(rc));
    fputs(",\"message\":", stderr);
    animctl_json_string(stderr, detail);
    fputs("}}\n", stderr);
    return 1;
  }
  fprintf(stderr, "animctl: %s: %s (%s)%s%s\n", what, anim_strerror(rc), anim_err_name(rc), *detail ? ": " : "",
          detail);
  return 1;
}

static void print_json_string(const char *s) { animctl_json_string(stdout, s); }

/* A command that takes no arguments refuses one rather than ignoring it. */
static int no_arguments(const char *command, int argc, char **argv) {
  if (argc <= 1) return 0;
  return animctl_fail("%s: unknown argument %s (it takes none)", command, argv[1]);
}

static int cmd_hello(const options_t *o, int argc, char **argv) {
  if (no_arguments("hello", argc, argv)) return 2;
  anim_hello_info_t info;
  int rc;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  rc = anim_client_hello(client, "animctl", &info, o->timeout_ms);
  if (rc) return report_error("hello", rc, client);
  if (o->json) {
    printf("{\"protocol_version\":%u,\"server_version\":", info.protocol_version);
    print_json_string(info.server_version);
    printf(",\"capabilities\":[");
    for (int i = 0; i < info.ncapabilities; i++) {
      if (i) putchar(',');
      print_json_string(info.capabilities[i]);
    }
    /* Every limit the hello carries (an agent pages pose requests by max_pose_frames, sizes batches...). */
    printf("],\"limits\":{\"max_frame_bytes\":%u,\"max_in_flight\":%u,\"max_batch\":%u,\"max_k\":%u,"
           "\"output_soft_limit_bytes\":%llu,\"output_hard_limit_bytes\":%llu,\"max_characters\":%u,"
           "\"max_characters_total\":%u,\"max_pose_frames\":%u,\"decode_budget_bytes\":%llu,"
           "\"stream_soft_limit_bytes\":%llu,\"max_subscriptions\":%u,\"max_ids\":%u,\"max_string_bytes\":%u,"
           "\"tick_rate\":%g,\"world_limit\":%g,\"max_trackers_ahead\":%u,\"max_trackers_waiting\":%u,"
           "\"max_push_ahead\":%u,\"max_pushes_pending\":%u,\"max_machines\":%u,\"max_machine_bytes\":%u,"
           "\"max_events_waiting\":%u,\"max_path_points\":%u,\"max_query_seconds\":%g,\"max_graph_builds\":%u,"
           "\"max_path_expansions\":%u,\"max_align_points\":%u,\"max_trackers\":%u,"
           "\"fit_models_per_database\":%u},\"admin\":%s,\"connection_id\":%llu}\n",
           info.max_frame_bytes, info.max_in_flight, info.max_batch, info.max_k,
           (unsigned long long)info.output_soft_limit, (unsigned long long)info.output_hard_limit,
           info.max_characters, info.max_characters_total, info.max_pose_frames,
           (unsigned long long)info.decode_budget_bytes, (unsigned long long)info.stream_soft_limit_bytes,
           info.max_subscriptions, info.max_ids, info.max_string_bytes, info.tick_rate, info.world_limit,
           info.max_trackers_ahead, info.max_trackers_waiting, info.max_push_ahead, info.max_pushes_pending,
           info.max_machines, info.max_machine_bytes, info.max_events_waiting, info.max_path_points,
           info.max_query_seconds, info.max_graph_builds, info.max_path_expansions, info.max_align_points,
           info.max_trackers, info.fit_models_per_database, info.admin ? "true" : "false",
           (unsigned long long)info.connection_id);
  } else {
    printf("server        animserver %s (protocol %u)\n", info.server_version, info.protocol_version);
    printf("connection    %llu\n", (unsigned long long)info.connection_id);
    printf("capabilities ");
    for (int i = 0; i < info.ncapabilities; i++) printf(" %s", info.capabilities[i]);
    printf("\nlimits        frame %u B, in flight %u, batch %u, k %u, output soft/hard %llu/%llu B\n",
           info.max_frame_bytes, info.max_in_flight, info.max_batch, info.max_k,
           (unsigned long long)info.output_soft_limit, (unsigned long long)info.output_hard_limit);
    printf("world         every coordinate within +-%g m\n", info.world_limit);
    printf("ahead         trackers %u ticks (%u sets waiting a character), pushes %u ticks (%u pending)\n",
           info.max_trackers_ahead, info.max_trackers_waiting, info.max_push_ahead, info.max_pushes_pending);
    printf("machines      %u loaded, %u B of text, %u events waiting a character\n", info.max_machines,
           info.max_machine_bytes, info.max_events_waiting);
    printf("graphs        at once %u builds, paths of %u points, plans of %u expansions, queries of %g s\n",
           info.max_graph_builds, info.max_path_points, info.max_path_expansions, info.max_query_seconds);
    printf("fit           %u trackers, align %u points, %u models cached per database\n", info.max_trackers,
           info.max_align_points, info.fit_models_per_database);
  }
  return 0;
}

static int cmd_ping(const options_t *o, int argc, char **argv) {
  int count = 1, rc;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      count = atoi(argv[++i]);
      if (count < 1 || count > 1000000) {
        return animctl_fail("ping --count: 1..1000000");
      }
    } else {
      return animctl_fail("ping: unknown argument %s", argv[i]);
    }
  }
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  for (int i = 0; i < count; i++) {
    uint64_t rtt;
    rc = anim_client_ping(client, "animctl", 7, &rtt, o->timeout_ms);
    if (rc) return report_error("ping", rc, client);
    if (o->json) printf("{\"seq\":%d,\"rtt_us\":%llu}\n", i, (unsigned long long)rtt);
    else printf("pong from %s:%d seq=%d time=%.3f ms\n", o->host, o->port, i, (double)rtt / 1000.0);
  }
  return 0;
}


/* Parses "1.5,2,-3" into values (at most max); returns the count or -1. */
static int parse_floats(const char *text, float *values, int max) {
  int n = 0;
  char *end;
  while (*text) {
    if (n == max) return -1;
    values[n++] = strtof(text, &end);
    if (end == text) return -1;
    text = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return n;
}

static int parse_int_arg(const char *flag, const char *text, int min, int *out) {
  char *end;
  long v = strtol(text, &end, 10);
  if (*text == 0 || *end || v < min || v > 1000000000) {
    return animctl_fail("%s %s: expected a whole number >= %d", flag, text, min);
  }
  *out = (int)v;
  return 0;
}

static void print_pose_text(const anim_pose_t *p) {
  for (int b = 0; b < p->nbones; b++) {
    printf("    bone %2d", b);
    if (p->local_positions)
      printf("  pos %8.4f %8.4f %8.4f", p->local_positions[3 * b], p->local_positions[3 * b + 1],
             p->local_positions[3 * b + 2]);
    if (p->local_rotations)
      printf("  rot %7.4f %7.4f %7.4f %7.4f", p->local_rotations[4 * b], p->local_rotations[4 * b + 1],
             p->local_rotations[4 * b + 2], p->local_rotations[4 * b + 3]);
    if (p->global_positions)
      printf("  global %8.4f %8.4f %8.4f", p->global_positions[3 * b], p->global_positions[3 * b + 1],
             p->global_positions[3 * b + 2]);
    printf("\n");
  }
}

static void print_float_array_json(const char *key, const float *values, int n) {
  if (!values) return;
  printf(",\"%s\":[", key);
  for (int i = 0; i < n; i++) printf("%s%g", i ? "," : "", values[i]);
  printf("]");
}

static void print_pose_json(const anim_pose_t *p) {
  printf("{\"frame\":%u", p->frame);
  print_float_array_json("local_positions", p->local_positions, 3 * p->nbones);
  print_float_array_json("local_rotations", p->local_rotations, 4 * p->nbones);
  print_float_array_json("local_velocities", p->local_velocities, 3 * p->nbones);
  print_float_array_json("local_angular_velocities", p->local_angular_velocities, 3 * p->nbones);
  print_float_array_json("global_positions", p->global_positions, 3 * p->nbones);
  print_float_array_json("global_rotations", p->global_rotations, 4 * p->nbones);
  print_float_array_json("global_velocities", p->global_velocities, 3 * p->nbones);
  print_float_array_json("global_angular_velocities", p->global_angular_velocities, 3 * p->nbones);
  printf(",\"contacts\":[");
  for (int c = 0; c < p->ncontacts; c++) printf("%s%d", c ? "," : "", p->contacts[c]);
  printf("]}");
}

/* The bone names of a search's --bone-position and --bone-velocity terms,
 * copied out of their NAME=x,y,z arguments; cmd_search frees them. */
typedef struct {
  char *position[16], *velocity[16];
} bone_names_t;

static int search(const options_t *o, int argc, char **argv, bone_names_t *names);

static int cmd_search(const options_t *o, int argc, char **argv) {
  bone_names_t names = {{NULL}, {NULL}};
  int rc = search(o, argc, argv, &names);
  for (int i = 0; i < 16; i++) free(names.position[i]), free(names.velocity[i]);
  return rc;
}

static int search(const options_t *o, int argc, char **argv, bone_names_t *names) {
  if (argc < 2) {
    return animctl_fail("search DB (--frame N | --features ...)");
  }
  anim_query_t q;
  anim_query_init(&q);
  float features[128], positions[48], velocities[48], traj_p[16], traj_d[16];
  const char *tags[32];
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0;
    if (!strcmp(a, "--raw")) { q.raw_features = 1; continue; }
    if (!strcmp(a, "--explain")) { q.explain = 1; continue; }
    if (!strcmp(a, "--pose")) { q.include_pose = 1; continue; }
    if (!v) { return animctl_fail("search: %s needs a value", a); }
    i++;
    if (!strcmp(a, "--frame")) rc = parse_int_arg(a, v, 0, &q.from_frame);
    else if (!strcmp(a, "--k")) rc = parse_int_arg(a, v, 1, &q.k);
    else if (!strcmp(a, "--current")) rc = parse_int_arg(a, v, 0, &q.current_frame);
    else if (!strcmp(a, "--ignore-range-end")) rc = parse_int_arg(a, v, 0, &q.ignore_range_end);
    else if (!strcmp(a, "--ignore-surrounding")) rc = parse_int_arg(a, v, 0, &q.ignore_surrounding);
    else if (!strcmp(a, "--transition-cost")) q.transition_cost = strtof(v, NULL);
    else if (!strcmp(a, "--tag") && q.ntags < 32) tags[q.ntags++] = v;
    else if ((!strcmp(a, "--bone-position") || !strcmp(a, "--bone-velocity")) && strchr(v, '=')) {
      int is_pos = !strcmp(a, "--bone-position");
      int *n = is_pos ? &q.npositions : &q.nvelocities;
      float *xyz = (is_pos ? positions : velocities) + 3 * *n;
      if (*n == 16 || parse_floats(strchr(v, '=') + 1, xyz, 3) != 3) {
        return animctl_fail("%s NAME=x,y,z (at most 16)", a);
      }
      char **name = &(is_pos ? names->position : names->velocity)[*n];
      if (!(*name = strndup(v, (size_t)(strchr(v, '=') - v)))) return report_error("search", ANIM_ENOMEM, NULL);
      (*n)++;
    } else if (!strcmp(a, "--trajectory-positions") || !strcmp(a, "--trajectory-directions")) {
      int is_pos = !strcmp(a, "--trajectory-positions");
      int n = parse_floats(v, is_pos ? traj_p : traj_d, 16);
      if (n < 0 || n % 2) {
        return animctl_fail("%s x,z,x,z,... (at most 8 samples)", a);
      }
      if (is_pos) q.ntrajectory_positions = n / 2;
      else q.ntrajectory_directions = n / 2;
    }
    else if (!strcmp(a, "--features")) {
      q.nfeatures = parse_floats(v, features, 128);
      q.features = features;
      if (q.nfeatures < 0) {
        return animctl_fail("--features: comma-separated numbers (at most 128)");
      }
    } else if (!strcmp(a, "--method")) {
      if (!strcmp(v, "brute")) q.method = ANIM_METHOD_BRUTE;
      else if (!strcmp(v, "boxes")) q.method = ANIM_METHOD_BOXES;
      else if (!strcmp(v, "fast")) q.method = ANIM_METHOD_FAST;
      else { return animctl_fail("--method: brute, boxes or fast"); }
    } else {
      return animctl_fail("search: unknown option %s", a);
    }
    if (rc) return rc;
  }
  q.tags = tags;
  q.position_bones = (const char *const *)names->position, q.positions = positions;
  q.velocity_bones = (const char *const *)names->velocity, q.velocities = velocities;
  q.trajectory_positions = traj_p, q.trajectory_directions = traj_d;
  int rc;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  anim_search_reply_t *reply;
  rc = anim_client_search(client, argv[1], &q, &reply, o->timeout_ms);
  if (rc) return report_error("search", rc, client);
  const anim_result_t *r = &reply->results[0];
  if (o->json) {
    printf("{\"database_version\":\"%016llx\",\"matches\":[", (unsigned long long)reply->database_version);
    for (int i = 0; i < r->nmatches; i++) {
      printf("%s{\"frame\":%u,\"range\":%u,\"range_name\":", i ? "," : "", r->matches[i].frame, r->matches[i].range);
      print_json_string(r->matches[i].range_name);
      printf(",\"cost\":%.9g", r->matches[i].cost);
      if (r->matches[i].pose) {
        printf(",\"pose\":");
        print_pose_json(r->matches[i].pose);
      }
      printf("}");
    }
    printf("]");
    if (r->nexplain) {
      printf(",\"explain\":[");
      for (int i = 0; i < r->nexplain; i++) {
        printf("%s{\"group\":", i ? "," : "");
        print_json_string(r->explain_names[i]);
        printf(",\"cost\":%.9g}", r->explain_costs[i]);
      }
      printf("],\"margin\":%.9g", r->margin);
    }
    printf("}\n");
  } else {
    printf("database version %016llx\n", (unsigned long long)reply->database_version);
    for (int i = 0; i < r->nmatches; i++) {
      printf("%2d  frame %6u  cost %10.5f  range %u %s\n", i + 1, r->matches[i].frame, r->matches[i].cost,
             r->matches[i].range, r->matches[i].range_name);
      if (r->matches[i].pose) print_pose_text(r->matches[i].pose);
    }
    if (r->nexplain) {
      printf("best match cost by feature group:\n");
      for (int i = 0; i < r->nexplain; i++) printf("  %-28s %10.5f\n", r->explain_names[i], r->explain_costs[i]);
      printf("margin to runner-up %.5f\n", r->margin);
    }
  }
  anim_search_reply_free(reply);
  return 0;
}

static int cmd_pose(const options_t *o, int argc, char **argv) {
  if (argc < 3) {
    return animctl_fail("pose DB FRAME [--count N] [--global] [--velocities]");
  }
  int frame, count = 1, rc = parse_int_arg("FRAME", argv[2], 0, &frame);
  if (rc) return rc;
  anim_pose_options_t opts = {1, 0, 0};
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--global")) opts.global = 1;
    else if (!strcmp(argv[i], "--velocities")) opts.velocities = 1;
    else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
      if ((rc = parse_int_arg("--count", argv[++i], 1, &count))) return rc;
    } else {
      return animctl_fail("pose: unknown option %s", argv[i]);
    }
  }
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  anim_pose_reply_t *reply;
  rc = anim_client_pose(client, argv[1], frame, count, &opts, &reply, o->timeout_ms);
  if (rc) return report_error("pose", rc, client);
  for (int i = 0; i < reply->nposes; i++) {
    if (o->json) {
      print_pose_json(&reply->poses[i]);
      printf("\n");
    } else {
      printf("frame %u\n", reply->poses[i].frame);
      print_pose_text(&reply->poses[i]);
    }
  }
  anim_pose_reply_free(reply);
  return 0;
}

static int cmd_stats(const options_t *o, int argc, char **argv) {
  if (no_arguments("stats", argc, argv)) return 2;
  anim_server_stats_t s;
  int rc;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  rc = anim_client_server_stats(client, &s, o->timeout_ms);
  if (rc) return report_error("stats", rc, client);
  printf(o->json ? "{\"uptime_s\":%.3f,\"connections\":%u,\"requests\":%llu,\"errors\":%llu,\"characters\":%u,"
                   "\"tick_rate\":%g,\"ticks\":%llu,\"ticks_late\":%llu,\"ticks_skipped\":%llu,"
                   "\"lateness_p50_us\":%llu,\"lateness_p99_us\":%llu,\"tick_work_p50_us\":%llu,"
                   "\"tick_work_p99_us\":%llu,\"frames_sent\":%llu,\"frames_dropped\":%llu,\"stream_bytes\":%llu,"
                   "\"cpu_s\":%.3f,\"rss_bytes\":%llu}\n"
                 : "uptime %.1f s, %u connections, %llu requests (%llu errors), %u characters\n"
                   "ticks at %g Hz: %llu (%llu late, %llu skipped), lateness p50 %llu us p99 %llu us, "
                   "work p50 %llu us p99 %llu us\n"
                   "streams: %llu frames sent, %llu dropped, %llu bytes; CPU %.1f s, RSS %llu bytes\n",
         (double)s.uptime_us / 1e6, s.connections, (unsigned long long)s.requests, (unsigned long long)s.errors,
         s.characters, s.tick_rate, (unsigned long long)s.ticks, (unsigned long long)s.ticks_late,
         (unsigned long long)s.ticks_skipped, (unsigned long long)s.lateness_p50_us,
         (unsigned long long)s.lateness_p99_us, (unsigned long long)s.tick_work_p50_us,
         (unsigned long long)s.tick_work_p99_us, (unsigned long long)s.frames_sent,
         (unsigned long long)s.frames_dropped, (unsigned long long)s.stream_bytes, s.cpu_user_s + s.cpu_system_s,
         (unsigned long long)s.rss_bytes);
  return 0;
}

static int cmd_shutdown(const options_t *o, int argc, char **argv) {
  if (no_arguments("shutdown", argc, argv)) return 2;
  int rc;
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) return rc;
  rc = anim_client_shutdown(client, o->timeout_ms);
  if (rc) return report_error("shutdown", rc, client);
  printf(o->json ? "{\"shutting_down\":true}\n" : "the server is shutting down (draining)\n");
  return 0;
}

static const struct {
  const char *name;
  command_fn run;
} commands[] = {{"stats", cmd_stats}, {"shutdown", cmd_shutdown}, {"hello", cmd_hello}, {"ping", cmd_ping},
                {"db", animctl_db}, {"search", cmd_search}, {"pose", cmd_pose}, {"load", animctl_load},
                {"inertialize", animctl_inertialize}, {"transition-cost", animctl_transition_cost},
                {"spring", animctl_spring}, {"render", animctl_render}, {"stream", animctl_stream},
                {"record", animctl_record},
                {"machine", animctl_machine}, {"graph", animctl_graph}, {"align", animctl_align}, {"fit", animctl_fit},
                {"inverse-dynamics", animctl_inverse_dynamics}, {"push", animctl_physics},
                {"marker-fit", animctl_marker_fit},
                {"history", animctl_history}, {"set-params", animctl_set_params}};

/* "cannot reach HOST:PORT" (a static buffer). */
static const char *where_text(const options_t *o) {
  static char where[300];
  snprintf(where, sizeof where, "cannot reach %s:%d", o->host, o->port);
  return where;
}

static anim_client_t *connected; /* animctl_connect's, closed by main */

int animctl_connect(const options_t *o, anim_client_t **out_client) {
  if (connected) {
    *out_client = connected;
    return 0;
  }
  int err;
  anim_client_options_t copts = {.timeout_ms = o->timeout_ms, .auth_token = o->auth_token};
  anim_client_t *client = anim_client_connect(o->host, o->port, &copts, &err);
  if (!client) {
    if (!o->json) return report_error(where_text(o), err, NULL);
    fprintf(stderr, "{\"error\":{\"kind\":\"connect\",\"code\":\"%s\",\"code_value\":%d,\"description\":",
            anim_err_name(err), err);
    animctl_json_string(stderr, anim_strerror(err));
    fputs(",\"message\":", stderr);
    animctl_json_string(stderr, where_text(o));
    fputs("}}\n", stderr);
    return 1;
  }
  anim_hello_info_t info;
  if (o->auth_token && *o->auth_token && (err = anim_client_hello(client, "animctl", &info, o->timeout_ms)) != 0) {
    int rc = report_error("authenticate", err, client);
    anim_client_close(client);
    return rc;
  }
  *out_client = connected = client;
  return 0;
}

int main(int argc, char **argv) {
  options_t o = {"127.0.0.1", 7878, 5000, 0, getenv("ANIM_AUTH_TOKEN")};
  static const struct option long_options[] = {{"host", required_argument, 0, 'h'},
                                               {"port", required_argument, 0, 'p'},
                                               {"timeout", required_argument, 0, 't'},
                                               {"json", no_argument, 0, 'j'},
                                               {"auth-token", required_argument, 0, 'a'},
                                               {"help", no_argument, 0, '?' + 256},
                                               {0, 0, 0, 0}};
  int opt;
  while ((opt = getopt_long(argc, argv, "+", long_options, NULL)) != -1) {
    switch (opt) {
    case 'h': o.host = optarg; break;
    case 'p': o.port = atoi(optarg); break;
    case 't': o.timeout_ms = atoi(optarg); break;
    case 'j': o.json = 1; break;
    case 'a': o.auth_token = optarg; break;
    case '?' + 256: usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind >= argc || o.port <= 0 || o.port > 65535 || o.timeout_ms <= 0) {
    usage(stderr);
    return 2;
  }
  json_errors = o.json;
  const char *name = argv[optind];
  /* `help COMMAND`, or --help anywhere after the command: that command's
   * help; never runs the command (`animctl shutdown --help` once shut the
   * server down). */
  if (!strcmp(name, "help")) {
    const command_help_t *h = optind + 1 < argc ? help_find(argv[optind + 1]) : NULL;
    if (h) command_usage(h);
    else if (optind + 1 < argc) return animctl_fail("help: no command %s (animctl --help lists them)", argv[optind + 1]);
    else usage(stdout);
    return 0;
  }
  for (int i = optind + 1; i < argc; i++)
    if (!strcmp(argv[i], "--help")) {
      const command_help_t *h = help_find(name);
      if (h) command_usage(h);
      else usage(stdout);
      return 0;
    }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(commands[i].name, name) != 0) continue;
    int rc = commands[i].run(&o, argc - optind, argv + optind);
    if (connected) anim_client_close(connected);
    return rc;
  }
  animctl_fail("unknown command %s (animctl --help lists them)", name);
  if (!o.json) usage(stderr);
  return 2;
}
