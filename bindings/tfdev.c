/* The tfdev executable: a Lua 5.4 interpreter with tfdev built in, used like `lua`.
 *
 * The C core is linked in and preloaded as "tfdev.core"; the pure-Lua half
 * is found relative to the executable (../share/lua/5.4 from bin/), which is
 * the same in the build tree and in an installed prefix, so no environment
 * variable is needed. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "l_common.h"

static const char *progname = "tfdev";

static void print_usage(FILE *f) {
  fprintf(f,
          "usage: %s [options] [script [args]]\n"
          "Available options are:\n"
          "  -e stat         execute string 'stat'\n"
          "  -i              enter interactive mode after executing 'script'\n"
          "  -l mod          require library 'mod' into global 'mod'\n"
          "  -l g=mod        require library 'mod' into global 'g'\n"
          "  -v              show version information\n"
          "  -E              ignore environment variables (LUA_INIT, LUA_PATH, LUA_CPATH)\n"
          "  -W              turn warnings on\n"
          "  --list-devices  create the devices the registered factories make and print them\n"
          "  --help          show this help\n"
          "  --              stop handling options\n"
          "  -               stop handling options and execute stdin\n",
          progname);
}

static void print_message(const char *msg) {
  fprintf(stderr, "%s: %s\n", progname, msg);
  fflush(stderr);
}

/* Error objects that are not strings (tfdev.error values) print through __tostring. */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      msg = lua_tostring(L, -1);
    else
      msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int status = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  return status;
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    print_message(msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return status;
}

static void print_version(void) {
  printf("tfdev %s (%s)\n", TFDEV_VERSION, LUA_RELEASE);
  fflush(stdout);
}

/* arg: script at 0, its arguments after, the interpreter and options before. */
static void create_arg_table(lua_State *L, char **argv, int argc, int script) {
  if (script == argc) script = 0; /* no script: the interpreter is arg[0] */
  lua_createtable(L, argc - script - 1, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l mod or -l g=mod */
static int dolibrary(lua_State *L, char *spec) {
  char *eq = strchr(spec, '=');
  const char *global = spec, *mod = spec;
  if (eq) {
    *eq = 0;
    mod = eq + 1;
  }
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) lua_setglobal(L, global);
  if (eq) *eq = '=';
  return report(L, status);
}

static int list_devices(lua_State *L) {
  return dostring(L,
                  "local tfdev = require 'tfdev'\n"
                  "if #tfdev.backends() == 0 then io.write('no backends tried (TFDEV_BACKENDS=none)\\n') end\n"
                  "for _, b in ipairs(tfdev.backends()) do\n"
                  "  io.write(string.format('backend %s: %s', b.name, b.loaded and 'loaded from ' .. b.path or 'not loaded'))\n"
                  "  io.write(b.why ~= '' and (' (' .. b.why .. ')') or '', '\\n')\n"
                  "end\n"
                  "io.write(tfdev.describe_devices(tfdev.factory.add_devices()))\n",
                  "=--list-devices");
}

static int handle_script(lua_State *L, char **argv) {
  const char *fname = argv[0];
  if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0) fname = NULL; /* stdin */
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    lua_getglobal(L, "arg");
    int n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
    lua_remove(L, -n - 1);
    status = docall(L, n, LUA_MULTRET);
  }
  return report(L, status);
}

/* ---- interactive mode ---- */
#define REPL_LINE_MAX 4096

static int pushline(lua_State *L, bool first) {
  char buf[REPL_LINE_MAX];
  fputs(first ? "> " : ">> ", stdout);
  fflush(stdout);
  if (!fgets(buf, sizeof buf, stdin)) return 0;
  size_t len = strlen(buf);
  if (len > 0 && buf[len - 1] == '\n') buf[--len] = 0;
  if (first && buf[0] == '=') lua_pushfstring(L, "return %s", buf + 1);
  else lua_pushlstring(L, buf, len);
  return 1;
}

static int addreturn(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *retline = lua_pushfstring(L, "return %s;", line);
  int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");
  if (status == LUA_OK) lua_remove(L, -2);
  else lua_pop(L, 2);
  return status;
}

static bool incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  if (len >= 5 && strcmp(msg + len - 5, "<eof>") == 0) {
    lua_pop(L, 1);
    return true;
  }
  return false;
}

static int multiline(lua_State *L) {
  for (;;) {
    size_t len;
    const char *line = lua_tolstring(L, 1, &len);
    int status = luaL_loadbuffer(L, line, len, "=stdin");
    if (!incomplete(L, status) || !pushline(L, false)) {
      lua_remove(L, 1);
      return status;
    }
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

static int loadline(lua_State *L) {
  lua_settop(L, 0);
  if (!pushline(L, true)) return -1;
  int status = addreturn(L);
  if (status != LUA_OK) status = multiline(L);
  else lua_remove(L, 1);
  return status;
}

static void print_results(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK)
    print_message(lua_pushfstring(L, "error calling 'print' (%s)", lua_tostring(L, -1)));
}

static void do_repl(lua_State *L) {
  const char *old = progname;
  progname = NULL;
  int status;
  while ((status = loadline(L)) != -1) {
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) print_results(L);
    else {
      const char *msg = lua_tostring(L, -1);
      fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
      lua_pop(L, 1);
    }
  }
  lua_settop(L, 0);
  fputc('\n', stdout);
  progname = old;
}

/* ---- start-up ---- */
static void add_own_paths(lua_State *L) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return;
  *slash = 0; /* the bin directory */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  lua_pushfstring(L, "%s/../" TFDEV_LUA_LDIR "/?.lua;%s/../" TFDEV_LUA_LDIR "/?/init.lua;%s", exe, exe,
                  lua_tostring(L, -1));
  lua_setfield(L, -3, "path");
  lua_pop(L, 1);
  lua_getfield(L, -1, "cpath");
  lua_pushfstring(L, "%s/../" TFDEV_LUA_CDIR "/?.so;%s", exe, lua_tostring(L, -1));
  lua_setfield(L, -3, "cpath");
  lua_pop(L, 2);
  /* The core is linked in: require "tfdev.core" never needs the .so. */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_tfdev_core);
  lua_setfield(L, -2, "tfdev.core");
  lua_pop(L, 1);
}

/* LUA_INIT_5_4 or LUA_INIT: "@file" runs a file, anything else is code, as lua does. */
static int handle_luainit(lua_State *L) {
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (!init) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (!init) return LUA_OK;
  if (init[0] == '@') return dochunk(L, luaL_loadfile(L, init + 1));
  return dostring(L, init, name);
}

typedef struct args {
  int script;  /* index of the script in argv, argc if none */
  bool interactive, version, no_env, warnings, has_exec;
  bool bad;
} args;

/* First pass: flags and where the script is. -e/-l/--list-devices run in the second. */
static args collect_args(int argc, char **argv) {
  args a = {argc, false, false, false, false, false, false};
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (s[0] != '-') {
      a.script = i;
      return a;
    }
    if (strcmp(s, "-") == 0) {
      a.script = i;
      return a;
    }
    if (strcmp(s, "--") == 0) {
      a.script = i + 1 < argc ? i + 1 : argc;
      return a;
    }
    if (strcmp(s, "--help") == 0) {
      print_usage(stdout);
      exit(EXIT_SUCCESS);
    }
    if (strcmp(s, "--list-devices") == 0) {
      a.has_exec = true;
    } else if (strcmp(s, "-i") == 0) {
      a.interactive = a.version = true;
    } else if (strcmp(s, "-v") == 0) {
      a.version = true;
    } else if (strcmp(s, "-E") == 0) {
      a.no_env = true;
    } else if (strcmp(s, "-W") == 0) {
      a.warnings = true;
    } else if (s[1] == 'e' || s[1] == 'l') {
      a.has_exec = true;
      if (s[2] == 0 && (++i >= argc || argv[i][0] == '-')) {
        fprintf(stderr, "%s: '%s' needs argument\n", progname, s);
        a.bad = true;
        return a;
      }
    } else {
      fprintf(stderr, "%s: unrecognized option '%s'\n", progname, s);
      a.bad = true;
      return a;
    }
  }
  return a;
}

static int run_args(lua_State *L, char **argv, int script) {
  for (int i = 1; i < script; i++) {
    const char *s = argv[i];
    int status = LUA_OK;
    if (strcmp(s, "--list-devices") == 0) {
      status = list_devices(L);
    } else if (s[0] == '-' && (s[1] == 'e' || s[1] == 'l')) {
      char *value = s[2] ? argv[i] + 2 : argv[++i];
      status = s[1] == 'e' ? dostring(L, value, "=(command line)") : dolibrary(L, value);
    }
    if (status != LUA_OK) return 0;
  }
  return 1;
}

typedef struct main_args {
  int argc;
  char **argv;
  int ok;
} main_args;

static int pmain(lua_State *L) {
  main_args *m = lua_touserdata(L, 1);
  int argc = m->argc;
  char **argv = m->argv;
  args a = collect_args(argc, argv);
  if (a.bad) {
    print_usage(stderr);
    return 0;
  }
  if (a.no_env) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  add_own_paths(L);
  create_arg_table(L, argv, argc, a.script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (a.warnings) lua_warning(L, "@on", 0);
  if (a.version) print_version();
  if (!a.no_env && handle_luainit(L) != LUA_OK) return 0;
  if (!run_args(L, argv, a.script)) return 0;
  if (a.script < argc && handle_script(L, argv + a.script) != LUA_OK) return 0;
  if (a.interactive) {
    do_repl(L);
  } else if (a.script == argc && !a.has_exec && !a.version) {
    if (isatty(STDIN_FILENO)) {
      print_version();
      do_repl(L);
    } else if (dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK) {
      return 0;
    }
  }
  m->ok = 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argv[0] && argv[0][0]) progname = argv[0];
  lua_State *L = luaL_newstate();
  if (!L) {
    print_message("cannot create state: not enough memory");
    return EXIT_FAILURE;
  }
  lua_gc(L, LUA_GCSTOP);
  main_args m = {argc, argv, 0};
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, &m);
  int status = lua_pcall(L, 1, 0, 0);
  report(L, status);
  lua_close(L);
  return status == LUA_OK && m.ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
