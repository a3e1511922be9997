#!/bin/sh
# Checks that every include arrow inside runtime/ points down the layer order of DESIGN.md, so a
# layer never comes to depend on one above it (ctest build.layers).
#   sh packaging/check_layers.sh SOURCE_DIR
# Layers, highest first. A file may include its own layer's headers and those of any layer below;
# public headers ("tfdev/...") and generated ones are not layers. runtime/testing is test support:
# only *_test.c files may include it, and its own files are not checked (they sit above everything,
# as a test does). A directory under runtime/ that is not listed here fails the check, so a new
# layer has to be given its place before it is used.
set -eu
src=${1:-.}
cd "$src"
layers="session import optimize exec graph kernels ops framework device core"
rank() { # prints the layer's rank (0 = highest) or nothing when it is not a layer
  i=0
  for l in $layers; do
    [ "$l" = "$1" ] && { echo "$i"; return; }
    i=$((i + 1))
  done
}
# Sets target to the path of include $2 written in directory $1, its leading ../ taken off against $1 (in
# the shell, with no process: one realpath per include doubled the check's time).
resolve() {
  r_dir=$1 r_inc=$2 # sh has no locals: names of their own, so the caller's dir and inc stay
  while :; do
    case "$r_inc" in
      ../*) r_inc=${r_inc#../} r_dir=${r_dir%/*} ;;
      ./*) r_inc=${r_inc#./} ;;
      *) break ;;
    esac
  done
  target=$r_dir/$r_inc
}
bad=0
for dir in runtime/*/; do
  dir=${dir%/}
  layer=${dir#runtime/}
  [ "$layer" = testing ] && continue
  own=$(rank "$layer")
  if [ -z "$own" ]; then
    echo "runtime/$layer is not a layer of packaging/check_layers.sh (add it where DESIGN.md puts it)"
    bad=1
    continue
  fi
  # A layer's files include its subdirectories' (runtime/kernels/<family>/).
  find "$dir" -name '*.[ch]' | sort | while read -r f; do
    here=${f%/*}
    # Each quoted include, as "LINE PATH".
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
      while read -r line inc; do
        case "$inc" in
          runtime/*) target=$inc ;;                       # from the source root (tests)
          */*) resolve "$here" "$inc" ;;                  # relative to the including file: sets target
          *) continue ;;                                  # own directory, public or generated header
        esac
        [ -e "$target" ] || continue # not a file of the tree: a public or generated header
        case "$target" in
          runtime/*) target=${target#runtime/} ;;
          *) continue ;; # outside runtime/: a public or generated header
        esac
        tlayer=${target%%/*}
        if [ "$tlayer" = testing ]; then
          case "$f" in *_test.c) continue ;; esac
          echo "$f:$line: includes $inc: only tests may include runtime/testing"
          echo x >>"${TMPDIR:-/tmp}/check_layers.$$"
          continue
        fi
        t=$(rank "$tlayer")
        if [ -z "$t" ] || [ "$t" -lt "$own" ]; then
          echo "$f:$line: includes $inc: runtime/$layer may not include from ${tlayer:-?} (a higher layer or none)"
          echo x >>"${TMPDIR:-/tmp}/check_layers.$$"
        fi
      done
  done
done
if [ -s "${TMPDIR:-/tmp}/check_layers.$$" ]; then
  bad=1
fi
rm -f "${TMPDIR:-/tmp}/check_layers.$$"
[ "$bad" -eq 0 ] && echo "every include in runtime/ points down the layers: $layers"
exit "$bad"
