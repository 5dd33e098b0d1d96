/*
 * graph_transitions.h: the part of a motion graph's build that chooses its
 * transitions among the distance matrix's local minima (Kovar, Gleicher and
 * Pighin 2002, section 3.2), and the window alignment every distance is
 * measured with. Internal to the graph's build (motion_graph.c); the
 * choice's rules and figures are described in motion_graph.h
 * ("Transitions").
 *
 * What it does not: compute the matrix (motion_graph.c's strips) or build
 * nodes and edges.
 */
#ifndef ANIM_GRAPH_TRANSITIONS_H
#define ANIM_GRAPH_TRANSITIONS_H

#include "graph/motion_graph.h"
#include "math/umeyama.h"

/* The points of the windows of frames i and j (global positions of the
 * weighted bones, frames -h..h), j's first: points holds 4 (2h + 1) nbones,
 * weights 2 (2h + 1) nbones. Fits the yaw map of j's window onto i's
 * (anim_umeyama_fit's code). */
int anim_graph_align_windows(const anim_database_t *db, const anim_graph_options_t *o, int h, int i, int j,
                             vec3 *points, float *weights, anim_umeyama_t *out_fit);

/* qsort order of transitions: by from, then to. */
int anim_graph_transition_compare(const void *a, const void *b);

/* Keeps, best first, the pairs of g's transitions (each pair once, either
 * half) whose two frames are nodes already or at least `spacing` frames
 * from every node of their range, so edges play `spacing` frames or more;
 * with o->slide (ANIM_GRAPH_SLIDE_AUTO: where two ranges repeat a motion
 * exactly), a refused pair joining two ranges not joined near it yet is
 * slid along its diagonal onto a node when it can. Rewrites
 * g->transitions as both halves of every kept pair, sorted by (from, to),
 * each once, and g->slide as the choice made. h, w: the build's half window
 * and window (frames). 0 or ANIM_ENOMEM. */
int anim_graph_transitions_sparsify(anim_motion_graph_t *g, const anim_database_t *db, const anim_graph_options_t *o,
                                    int h, int w, int spacing);

#endif
