/* service.c: the service table, generated from request_types.h, and the steps' runner. */
#include "anim_error.h"
#include "service.h"

static const srv_service_t *const services[SRV_REQ_COUNT] = {
#define SRV_SERVICE_ROW(TYPE, name, Message) [SRV_REQ_##TYPE] = &srv_service_##name,
    SRV_REQUEST_TYPES(SRV_SERVICE_ROW)
#undef SRV_SERVICE_ROW
};

const srv_service_t *srv_service_for(int type) {
  return type >= 0 && type < SRV_REQ_COUNT ? services[type] : NULL;
}

void srv_service_run_step(srv_service_step_fn step, const srv_service_ctx_t *ctx, const srv_request_t *request,
                          srv_response_t *response) {
  if (!step || response->error) return;
  int rc = step(ctx, request, response);
  if (rc && !response->error) srv_response_fail(response, rc, "%s", anim_strerror(rc));
}
