#!/bin/sh
# SLUICE_FILTER on a class it cannot register: each mistake stops the compile with
# sluice/filter.h's own words (a static_assert), not only with the template errors of
# std::make_unique that came alone before (an outside review of a C++ user's first day).
#
#   filter_misuse_test.sh SOURCE_DIR BUILD_DIR CXX
set -u
source_dir=$1
build_dir=$2
cxx=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

expect() {  # NAME BODY EXPECTED-TEXT
  printf '#include <sluice/sluice.h>\n%s\n' "$2" > "$work/$1.cc"
  if out=$("$cxx" -std=c++20 -fsyntax-only -I"$source_dir/core-cpp/include" -I"$build_dir/core-cpp/include" \
           "$work/$1.cc" 2>&1); then
    echo "FAIL: $1: compiled"
    failed=1
  elif printf '%s' "$out" | grep -q "static assertion failed: $3"; then
    echo "ok: $1: $3"
  else
    echo "FAIL: $1: not said: $3"
    printf '%s\n' "$out" | head -5 | sed 's/^/  | /'
    failed=1
  fi
}

expect not_a_filter 'class G { public: void process(sluice::Context&) {} }; SLUICE_FILTER(G)' \
  "SLUICE_FILTER(G): the class must derive (publicly) from sluice::Filter"
expect misspelt_process 'class G : public sluice::Filter { public: void procss(sluice::Context&) {} }; SLUICE_FILTER(G)' \
  "SLUICE_FILTER(G): the class is abstract: does it override void process(sluice::Context&)"
expect no_default_constructor \
  'class G : public sluice::Filter { public: explicit G(int) {} void process(sluice::Context&) override {} }; SLUICE_FILTER(G)' \
  "SLUICE_FILTER(G): the class needs a public constructor without arguments"
# And a right one compiles.
printf '#include <sluice/sluice.h>\nclass G : public sluice::Filter { public: void process(sluice::Context&) override {} };\nSLUICE_FILTER(G)\n' \
  > "$work/right.cc"
if "$cxx" -std=c++20 -fsyntax-only -I"$source_dir/core-cpp/include" -I"$build_dir/core-cpp/include" "$work/right.cc"; then
  echo "ok: a right filter compiles"
else
  echo "FAIL: a right filter does not compile"
  failed=1
fi
[ "$failed" = 0 ] && echo PASS
exit "$failed"
