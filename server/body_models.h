/*
 * body_models.h: a database's body model (physics/body.h), built once and
 * kept with its entry (srv_db_entry_t.physics), for everything that needs
 * one: the physical characters (actor_physical.c), inverse dynamics
 * (service_dynamics.c) and marker fitting at 70 kg (service_markers.c, which
 * only reads it: its fitter compiles its own MuJoCo model from the MJCF). One model, one set of sizes: the crowd's (bodies of
 * 2.3 MB, physics/body.h), which inverse dynamics' private copy takes too.
 *
 * The build reads only the read-only database and runs on the pool (6-20 ms
 * on the shared skeletons: the MJCF, MuJoCo's compile, the joint-space
 * inertias), never on the loop; the entry is changed on the loop only,
 * first build wins: two requests that raced each built one, the second is
 * released with its response. The model is freed with the entry (the
 * characters and requests using it hold the entry). What is not here: the
 * mass (70 kg; inverse dynamics scales its copy to a request's) or any
 * per-character state.
 */
#ifndef SRV_BODY_MODELS_H
#define SRV_BODY_MODELS_H

#include "registry.h"
#include "request.h"

/* Pool: builds the body model of out->entry's database into out->held
 * (released with the response unless installed) and returns it; NULL
 * with the response failed (ANIM_EUNSUPPORTED, "<field>: database X has no
 * body: why"). */
struct anim_physics_model *srv_body_model_build(srv_response_t *out, const char *field);

/* Loop: a model out->held holds (srv_body_model_build's) becomes the
 * entry's when the entry has none yet; else it stays held, released with
 * the response. Returns the entry's model (NULL when neither has one). */
struct anim_physics_model *srv_body_model_install(srv_response_t *out);

#endif
