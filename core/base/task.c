/* task.c: tasks through a caller's runner, or in order (see task.h). */
#include <stddef.h>
#include "base/task.h"

int anim_task_runner_threads(const anim_task_runner_t *runner) {
  return runner && runner->run && runner->threads > 1 ? runner->threads : 1;
}

void anim_task_run(const anim_task_runner_t *runner, anim_task_fn fn, void *arg, int n) {
  if (n <= 0) return;
  if (anim_task_runner_threads(runner) > 1 && n > 1) {
    runner->run(runner->ctx, fn, arg, n);
    return;
  }
  for (int i = 0; i < n; i++) fn(arg, i);
}
