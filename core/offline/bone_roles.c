/* bone_roles.c: the bones that play the hips, thighs, feet and toes, found by name (see bone_roles.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "anim_error.h"
#include "offline/bone_roles.h"

#define MAX_WORDS 12
#define WORD_MAX 32

typedef struct {
  int n;
  char w[MAX_WORDS][WORD_MAX];
} words_t;

enum { SIDE_NONE = 0, SIDE_LEFT = 1, SIDE_RIGHT = 2 };
enum { KIND_THIGH, KIND_FOOT, KIND_TOE, KIND_COUNT };

static const char *const role_names[ANIM_BONE_ROLE_COUNT] = {"hips",      "thigh-left", "thigh-right", "foot-left",
                                                              "foot-right", "toe-left",   "toe-right"};

const char *anim_bone_role_name(anim_bone_role_t role) {
  return role >= 0 && role < ANIM_BONE_ROLE_COUNT ? role_names[role] : "unknown";
}

int anim_bone_role_parse(const char *name) {
  for (int r = 0; r < ANIM_BONE_ROLE_COUNT; r++)
    if (name && strcmp(name, role_names[r]) == 0) return r;
  return -1;
}

/* ---- reading a name ----------------------------------------------------------------- */

static void end_word(words_t *out, char *cur, int *len) {
  if (*len > 0 && out->n < MAX_WORDS) {
    cur[*len] = '\0';
    memcpy(out->w[out->n++], cur, (size_t)*len + 1);
  }
  *len = 0;
}

/* The words of name (see bone_roles.h): namespace dropped, split at
 * separators, case changes and digits, lower-cased, digits dropped. */
static void split_words(const char *name, words_t *out) {
  const char *start = name;
  for (const char *p = name; *p; p++)
    if (*p == ':' || *p == '|') start = p + 1;
  char cur[WORD_MAX];
  int len = 0;
  out->n = 0;
  for (const char *p = start; *p; p++) {
    unsigned char c = (unsigned char)*p, prev = p > start ? (unsigned char)p[-1] : 0, next = (unsigned char)p[1];
    if (!isalpha(c)) {
      end_word(out, cur, &len);
      continue;
    }
    /* lower->Upper starts a word (LeftFoot); so does the last capital of a run before a lower-case letter (LHip). */
    if (isupper(c) && ((islower(prev)) || (isupper(prev) && islower(next)))) end_word(out, cur, &len);
    if (len < WORD_MAX - 1) cur[len++] = (char)tolower(c);
  }
  end_word(out, cur, &len);
}

static int word_is(const char *w, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(w, list[i]) == 0) return 1;
  return 0;
}

static const char *const excluded_words[] = {"end", "nub", "site", "ik", "target", "pole", NULL};
static const char *const thigh_words[] = {"upleg", "upperleg", "thigh", "femur", NULL};
static const char *const foot_words[] = {"foot", "ankle", NULL};
static const char *const toe_words[] = {"toe", "toes", "toebase", NULL};

/* 1 when w names a role by itself (for the glued side letter of lfoot, rtoe). */
static int is_role_word(const char *w) {
  return word_is(w, thigh_words) || word_is(w, foot_words) || word_is(w, toe_words) || !strcmp(w, "hip") ||
         !strcmp(w, "ball");
}

/* Takes the side word out of words; returns the side. */
static int take_side(words_t *words) {
  for (int i = 0; i < words->n; i++) {
    const char *w = words->w[i];
    int side = !strcmp(w, "l") || !strcmp(w, "left")    ? SIDE_LEFT
               : !strcmp(w, "r") || !strcmp(w, "right") ? SIDE_RIGHT : 0;
    if (!side) continue;
    memmove(words->w[i], words->w[i + 1], (size_t)(words->n - i - 1) * sizeof words->w[0]);
    words->n--;
    return side;
  }
  /* An all-lower-case name with the side glued on: lfoot, rtoe. */
  if (words->n == 1 && (words->w[0][0] == 'l' || words->w[0][0] == 'r') && is_role_word(words->w[0] + 1)) {
    int side = words->w[0][0] == 'l' ? SIDE_LEFT : SIDE_RIGHT;
    memmove(words->w[0], words->w[0] + 1, strlen(words->w[0]));
    return side;
  }
  return SIDE_NONE;
}

/* How well words name a role of kind (0: not at all): the role word's
 * specificity less one per word left unexplained. */
static int kind_score(const words_t *words, int kind) {
  int best = 0, used = 0;
  for (int i = 0; i < words->n; i++) {
    const char *w = words->w[i];
    int score = 0, span = 1;
    if (kind == KIND_THIGH) {
      if (word_is(w, thigh_words)) score = 3;
      else if ((!strcmp(w, "up") || !strcmp(w, "upper")) && i + 1 < words->n && !strcmp(words->w[i + 1], "leg"))
        score = 3, span = 2;
      else if (!strcmp(w, "hip")) score = 2;
    } else if (kind == KIND_FOOT) {
      if (word_is(w, foot_words)) score = 3;
    } else {
      if (word_is(w, toe_words)) score = 3;
      else if (!strcmp(w, "ball")) score = 2;
    }
    if (score > best) best = score, used = span;
  }
  return best ? best - (words->n - used) : 0;
}

/* ---- choosing bones ----------------------------------------------------------------- */

static int depth_of(const anim_skeleton_t *s, int b) {
  int d = 0;
  for (int p = s->parents[b]; p >= 0 && d <= ANIM_MAX_BONES; p = s->parents[p]) d++;
  return d;
}

/* The nearest common ancestor of a and b (a bone is its own ancestor), or -1. */
static int common_ancestor(const anim_skeleton_t *s, int a, int b) {
  unsigned char above_a[ANIM_MAX_BONES] = {0};
  for (int p = a; p >= 0; p = s->parents[p]) above_a[p] = 1;
  for (int p = b; p >= 0; p = s->parents[p])
    if (above_a[p]) return p;
  return -1;
}

/* The hips when the thighs do not tell: a bone named hips, hip or pelvis alone, else the root. */
static int hips_by_name(const anim_skeleton_t *s) {
  static const char *const hips_words[] = {"hips", "hip", "pelvis", NULL};
  for (int b = 0; b < s->nbones; b++) {
    words_t words;
    split_words(s->names[b], &words);
    if (words.n == 1 && word_is(words.w[0], hips_words)) return b;
  }
  return 0;
}

/* The best bone per side and kind, by name: found[kind][side - 1]. */
static void find_by_name(const anim_skeleton_t *s, int found[KIND_COUNT][2]) {
  int best_score[KIND_COUNT][2] = {{0}};
  for (int k = 0; k < KIND_COUNT; k++) found[k][0] = found[k][1] = -1;
  for (int b = 0; b < s->nbones; b++) {
    words_t words;
    split_words(s->names[b], &words);
    int excluded = 0;
    for (int i = 0; i < words.n; i++) excluded |= word_is(words.w[i], excluded_words);
    int side = excluded ? SIDE_NONE : take_side(&words);
    if (side == SIDE_NONE) continue;
    for (int k = 0; k < KIND_COUNT; k++) {
      int score = kind_score(&words, k), *have = &found[k][side - 1];
      if (score <= 0) continue;
      int better = score > best_score[k][side - 1];
      if (!better && score == best_score[k][side - 1]) {
        /* Ties: the deepest thigh (past zero-length hip joints), the shallowest foot and toe. */
        int d = depth_of(s, b), dh = depth_of(s, *have);
        better = k == KIND_THIGH ? d > dh : d < dh;
      }
      if (better) *have = b, best_score[k][side - 1] = score;
    }
  }
}

int anim_bone_roles_find(const anim_skeleton_t *s, const anim_bone_names_t *named, int out[ANIM_BONE_ROLE_COUNT],
                         char *err, int errlen) {
  int found[KIND_COUNT][2];
  find_by_name(s, found);
  out[ANIM_BONE_THIGH_LEFT] = found[KIND_THIGH][0], out[ANIM_BONE_THIGH_RIGHT] = found[KIND_THIGH][1];
  out[ANIM_BONE_FOOT_LEFT] = found[KIND_FOOT][0], out[ANIM_BONE_FOOT_RIGHT] = found[KIND_FOOT][1];
  out[ANIM_BONE_TOE_LEFT] = found[KIND_TOE][0], out[ANIM_BONE_TOE_RIGHT] = found[KIND_TOE][1];
  out[ANIM_BONE_HIPS] = -1;
  for (int r = 0; named && r < ANIM_BONE_ROLE_COUNT; r++) {
    const char *name = named->names[r];
    if (!name || !*name) continue;
    if ((out[r] = anim_skeleton_find(s, name)) < 0) {
      if (err && errlen > 0)
        snprintf(err, (size_t)errlen, "%s: no bone named \"%s\" in the skeleton", role_names[r], name);
      return ANIM_ENOTFOUND;
    }
  }
  if (out[ANIM_BONE_HIPS] < 0) {
    int l = out[ANIM_BONE_THIGH_LEFT], r = out[ANIM_BONE_THIGH_RIGHT];
    int lca = l >= 0 && r >= 0 ? common_ancestor(s, l, r) : -1;
    out[ANIM_BONE_HIPS] = lca >= 0 ? lca : hips_by_name(s);
  }
  return 0;
}
