/* An example host: a fixed-timestep loop (a game's frame loop) that embeds Lua and tfdev, loads a
 * small policy network from policy.lua, and each frame starts an asynchronous step and picks up
 * the previous one's result, never waiting for tfdev. It prints the frames run, the steps
 * completed, the worst time a frame spent in tfdev and the median time from starting a step to
 * picking its result up.
 *
 *   host [frames [policy.lua]]      (defaults: 600 frames, the policy.lua beside the sources)
 *
 * Built against an installed tfdev with find_package(tfdev) (CMakeLists.txt here) or with
 * pkg-config --cflags --libs tfdev-lua; CI builds it both ways and runs it. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep under -std=c11 */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tfdev/lua.h>

#ifndef POLICY_PATH
#define POLICY_PATH "policy.lua"
#endif

#define FRAME_SECONDS (1.0 / 240.0) /* a fast fixed timestep, so CI's 600 frames take 2.5 s */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t) {
  double left = t - now();
  if (left <= 0) return;
  struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
  nanosleep(&ts, NULL);
}

/* The engine's log: tfdev's lines come here, tagged. */
static void host_log(void *ctx, tfd_log_level level, const char *line) {
  (void)ctx;
  fprintf(stderr, "[host log %d] %s\n", (int)level, line);
}

/* tfdev's errors are tfdev.error values, not strings: luaL_tolstring prints them through their
 * __tostring ("INVALID_ARGUMENT: ..."), where lua_tostring would give NULL. */
static int fail(lua_State *L, const char *what) {
  fprintf(stderr, "host: %s: %s\n", what, luaL_tolstring(L, -1, NULL));
  lua_close(L);
  return 1;
}

int main(int argc, char **argv) {
  int frames = argc > 1 ? atoi(argv[1]) : 600;
  const char *script = argc > 2 ? argv[2] : POLICY_PATH;
  tfd_status *st = tfd_status_new();
  tfd_host_logger logger = {host_log, TFD_LOG_WARNING, NULL};
  tfd_runtime_config cfg = {.logger = &logger};
  tfd_runtime *rt = NULL;
  tfd_runtime_new(&cfg, &rt, st);
  if (!rt) {
    fprintf(stderr, "host: %s\n", tfd_status_message(st));
    return 1;
  }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  if (tfdev_use_runtime(L, rt, st) != TFD_OK) fprintf(stderr, "host: %s\n", tfd_status_message(st));
  tfd_runtime_unref(rt); /* the state keeps its own reference */
  luaL_requiref(L, "tfdev", luaopen_tfdev, 1);
  lua_pop(L, 1);
  if (luaL_dofile(L, script) != LUA_OK) return fail(L, script);
  int policy = lua_gettop(L);

  double start = now(), worst = 0;
  int completed = 0;
  for (int f = 1; f <= frames; f++) {
    double t0 = now();
    lua_getfield(L, policy, "frame");
    lua_pushinteger(L, f);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) return fail(L, "policy.frame");
    completed += (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    double spent = now() - t0; /* the frame's time in tfdev: starting and collecting steps */
    if (spent > worst) worst = spent;
    sleep_until(start + f * FRAME_SECONDS); /* the rest of the frame: rendering, say */
  }
  lua_getfield(L, policy, "median_step_ms");
  lua_call(L, 0, 1);
  double median = lua_tonumber(L, -1);
  lua_pop(L, 1);
  printf("frames: %d\nsteps completed: %d\nworst frame time in tfdev: %.3f ms\n"
         "median step latency, start to pick-up: %.3f ms (a frame is %.3f ms)\n",
         frames, completed, worst * 1000, median, FRAME_SECONDS * 1000);
  printf("a frame waited on tfdev longer than a step: %s\n", worst * 1000 > median && median > 0 ? "yes" : "no");
  lua_getfield(L, policy, "close");
  lua_call(L, 0, 0);
  lua_close(L);
  tfd_status_free(st);
  return completed > 0 ? 0 : 1;
}
