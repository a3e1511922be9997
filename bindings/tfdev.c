/* The tfdev executable: a Lua 5.4 interpreter with tfdev built in, used like `lua`.
 *
 * The C core is linked in and preloaded as "tfdev.core"; the pure-Lua half
 * is found relative to the executable (../share/lua/5.4 from bin/), which is
 * the same in the build tree and in an installed prefix, so no environment
 * variable is needed. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "l_common.h"

#ifdef TFDEV_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

static const char *progname = "tfdev";

static void print_usage(FILE *f) {
  fprintf(f,
          "usage: %s [options] [script [args]]\n"
          "Available options are:\n"
          "  -e stat         execute string 'stat'\n"
          "  -i              enter interactive mode after executing 'script'\n"
          "  -l mod          require library 'mod' into global 'mod'\n"
          "  -l g=mod        require library 'mod' into global 'g'\n"
          "  -v, --version   show version information\n"
          "  -E              ignore environment variables (LUA_INIT, LUA_PATH, LUA_CPATH)\n"
          "  -W              turn warnings on\n"
          "  --list-devices  create the devices the registered factories make and print them\n"
          "  --help          show this help\n"
          "  --              stop handling options\n"
          "  -               stop handling options and execute stdin\n",
          progname);
}

/* progname is NULL in the REPL, where messages are not the program's last words. */
static void print_message(const char *msg) {
  if (progname) fprintf(stderr, "%s: ", progname);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
}

/* Error objects that are not strings (tfdev.error values) print through __tostring. */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg && lua_istable(L, 1) && lua_getfield(L, 1, "where") == LUA_TSTRING &&
      luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) /* a tfdev.error: where it was raised */
    msg = lua_pushfstring(L, "%s: %s", lua_tostring(L, -2), lua_tostring(L, -1));
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

/* ---- interactive mode ----
 * As lua.c's REPL: a line that is an expression prints its values (so does "=expr"), an
 * incomplete chunk reads continuation lines, an error prints and the loop goes on, end of input
 * ends it. Differences: values print through tfdev.repl (tables as constructors, keys sorted,
 * depth-limited; tensors and the like by __tostring); prompts only when stdin is a terminal (as
 * Python does: piped input gets its results, not prompt noise); with libreadline (at build time)
 * a terminal gets line editing and history in ~/.tfdev_history. */
static bool repl_tty;         /* stdin is a terminal */
static int repl_printer = LUA_NOREF; /* tfdev.repl.format_results, when it loads */

#ifdef TFDEV_HAVE_READLINE
#define HISTORY_MAX 1000
static char history_path[PATH_MAX]; /* empty: no history file (HOME unset) */
static bool history_file_exists;

static void history_open(void) {
  rl_readline_name = "tfdev";
  using_history();
  const char *home = getenv("HOME");
  if (!home || !*home) return;
  int n = snprintf(history_path, sizeof history_path, "%s/.tfdev_history", home);
  if (n < 0 || (size_t)n >= sizeof history_path) {
    history_path[0] = 0;
    return;
  }
  history_file_exists = read_history(history_path) == 0;
}

/* Each entry goes to the file at once, so a REPL that is killed keeps what was typed. */
static void history_add(const char *line) {
  if (!repl_tty || !line[0]) return;
  add_history(line);
  if (!history_path[0]) return;
  if ((history_file_exists ? append_history(1, history_path) : write_history(history_path)) == 0)
    history_file_exists = true;
}

static void history_close(void) {
  if (history_path[0] && history_file_exists) history_truncate_file(history_path, HISTORY_MAX);
}
#else
static void history_add(const char *line) { (void)line; }
#endif

/* Pushes one line of stdin without its newline, however long; 0 at end of input. */
static int read_line(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  bool any = false;
  for (;;) {
    char *p = luaL_prepbuffer(&b);
    if (!fgets(p, LUAL_BUFFERSIZE, stdin)) break;
    any = true;
    size_t len = strlen(p);
    luaL_addsize(&b, len);
    if (len > 0 && p[len - 1] == '\n') {
      luaL_buffsub(&b, 1);
      break;
    }
  }
  luaL_pushresult(&b);
  if (!any) lua_pop(L, 1);
  return any;
}

static int pushline(lua_State *L, bool first) {
  const char *prompt = first ? "> " : ">> ";
#ifdef TFDEV_HAVE_READLINE
  if (repl_tty) {
    char *line = readline(prompt);
    if (!line) return 0;
    lua_pushstring(L, line);
    free(line);
  } else
#endif
  {
    if (repl_tty) {
      fputs(prompt, stdout);
      fflush(stdout);
    }
    if (!read_line(L)) return 0;
  }
  const char *line = lua_tostring(L, -1);
  if (first && line[0] == '=') { /* "=expr": Lua 5.1's shorthand for "return expr" */
    lua_pushfstring(L, "return %s", line + 1);
    lua_remove(L, -2);
  }
  return 1;
}

/* Tries the line as "return line;": an expression prints its values. */
static int addreturn(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *retline = lua_pushfstring(L, "return %s;", line);
  int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");
  if (status == LUA_OK) {
    lua_remove(L, -2);
    history_add(line);
  } else {
    lua_pop(L, 2);
  }
  return status;
}

/* A syntax error that ends at <eof> (the message at the top) means the chunk is not finished yet. */
static bool incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  return len >= 5 && strcmp(msg + len - 5, "<eof>") == 0;
}

/* Reads continuation lines until the chunk loads or fails for another reason. Input that ends in
 * the middle of a chunk reports the chunk's syntax error ("'end' expected near <eof>"). Unlike
 * lua.c, a chunk of several lines is tried as an expression first, so an expression written over
 * several lines prints its values as a one-line one does. */
static int multiline(lua_State *L) {
  for (bool continued = false;; continued = true) {
    size_t len;
    const char *chunk = lua_tolstring(L, 1, &len);
    if (continued) {
      const char *retchunk = lua_pushfstring(L, "return %s;", chunk);
      if (luaL_loadbuffer(L, retchunk, strlen(retchunk), "=stdin") == LUA_OK) {
        lua_remove(L, -2);
        history_add(chunk);
        return LUA_OK;
      }
      lua_pop(L, 2);
    }
    int status = luaL_loadbuffer(L, chunk, len, "=stdin");
    if (!incomplete(L, status) || !pushline(L, false)) {
      history_add(chunk);
      return status;
    }
    lua_remove(L, -2); /* the <eof> message */
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

/* Leaves the loaded chunk (or the error) alone on the stack; -1 at end of input. */
static int loadline(lua_State *L) {
  lua_settop(L, 0);
  if (!pushline(L, true)) return -1;
  int status = addreturn(L);
  if (status != LUA_OK) status = multiline(L);
  lua_remove(L, 1);
  return status;
}

static void load_printer(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "tfdev.repl");
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1) &&
      lua_getfield(L, -1, "format_results") == LUA_TFUNCTION) {
    repl_printer = luaL_ref(L, LUA_REGISTRYINDEX);
  } else {
    lua_pop(L, 1); /* without it, results print as print() prints them */
  }
  lua_pop(L, 1);
}

static void print_results(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  if (repl_printer != LUA_NOREF) lua_rawgeti(L, LUA_REGISTRYINDEX, repl_printer);
  else lua_getglobal(L, "print");
  lua_insert(L, 1);
  if (repl_printer == LUA_NOREF) {
    if (lua_pcall(L, n, 0, 0) != LUA_OK)
      print_message(lua_pushfstring(L, "error calling 'print' (%s)", lua_tostring(L, -1)));
    return;
  }
  if (lua_pcall(L, n, 1, 0) != LUA_OK) {
    print_message(lua_pushfstring(L, "error printing the results (%s)", luaL_tolstring(L, -1, NULL)));
    return;
  }
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  fwrite(s, 1, len, stdout);
  fputc('\n', stdout);
  fflush(stdout);
}

/* Ctrl-C while a chunk runs stops the chunk, not the REPL: the handler can only set a hook, and
 * the hook raises the error at the next Lua instruction (lua.c does the same). A step the chunk waits
 * for is cancelled too: the REPL hands the flag the handler raises to tfdev (tfdev_lua_set_interrupt),
 * whose runs then wait in slices and cancel their step when it is raised, so control comes back to
 * the prompt with the sessions as they were. The handler's state is the process's, as a signal is. */
static lua_State *interrupted_state;
static volatile sig_atomic_t interrupt_flag;

static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

static void on_sigint(int sig) {
  signal(sig, SIG_DFL); /* a second Ctrl-C ends the process */
  interrupt_flag = 1;
  lua_sethook(interrupted_state, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int docall_interruptible(lua_State *L, int narg, int nres) {
  interrupted_state = L;
  interrupt_flag = 0;
  signal(SIGINT, on_sigint);
  int status = docall(L, narg, nres);
  signal(SIGINT, SIG_DFL);
  /* A cancelled step raised its error before the hook could: the hook must not stop the next chunk. */
  if (interrupt_flag) lua_sethook(L, NULL, 0, 0);
  interrupt_flag = 0;
  return status;
}

static void do_repl(lua_State *L) {
  const char *old = progname;
  progname = NULL;
  repl_tty = isatty(STDIN_FILENO);
#ifdef TFDEV_HAVE_READLINE
  if (repl_tty) history_open();
#endif
  load_printer(L);
  lua_getglobal(L, "tfdev"); /* the REPL has tfdev at hand, as lua.c has its standard libraries */
  if (lua_isnil(L, -1)) {
    lua_getglobal(L, "require");
    lua_pushliteral(L, "tfdev");
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) lua_setglobal(L, "tfdev");
    else report(L, LUA_ERRRUN);
  }
  lua_settop(L, 0);
  tfdev_lua_set_interrupt(L, &interrupt_flag, NULL); /* fails, harmlessly, when tfdev could not be opened */
  int status;
  while ((status = loadline(L)) != -1) {
    if (status == LUA_OK) status = docall_interruptible(L, 0, LUA_MULTRET);
    if (status == LUA_OK) {
      print_results(L);
    } else {
      report(L, status);
    }
  }
  lua_settop(L, 0);
#ifdef TFDEV_HAVE_READLINE
  if (repl_tty) history_close();
#endif
  if (repl_tty) fputc('\n', stdout); /* leave the shell's prompt on a line of its own */
  fflush(stdout);
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
    } else if (strcmp(s, "-v") == 0 || strcmp(s, "--version") == 0) {
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

/* OpenBLAS's pthreads build starts its worker threads as it loads, and each spins on sched_yield
 * for 2^28 cycles (70-130 ms here) before it sleeps. A script's first runs fell in that window and
 * found a core taken: emotion's first run took 83-117 ms in 4 runs of 10, against 6-9 ms. This
 * program owns its process, so it stops the workers before the script starts; OpenBLAS starts them
 * again on its first threaded call, as it does in a forked child. Weak, so that a BLAS without
 * the call (OpenBLAS's OpenMP build, another library) links as well. A host that embeds tfdev
 * owns its OpenBLAS and chooses for itself (docs/performance.md: OPENBLAS_THREAD_TIMEOUT). */
extern int blas_thread_shutdown_(void) __attribute__((weak));

int main(int argc, char **argv) {
  if (blas_thread_shutdown_) blas_thread_shutdown_();
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
