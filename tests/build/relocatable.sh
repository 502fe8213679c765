#!/usr/bin/env bash
# A build folder carried elsewhere still runs (tools/stage-gpu carries one to a GPU machine, at
# another path): no binary's run path names the build folder (they are relative, $ORIGIN), and
# culua, libculua.so and cu.so, copied with the engine to a fresh folder in the build's layout,
# start there and load the engine from there.
#   tests/build/relocatable.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd -P)
fail() { echo "FAIL: $*" >&2; exit 1; }

for f in culua libculua_engine.so libculua.so module/cu.so tests/culua_unit_tests tests/culua_embed_tests; do
  [[ -e $build/$f ]] || continue
  runpath=$(readelf -d "$build/$f" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  echo "$f: ${runpath:-(no run path)}"
  [[ $runpath != *"$build"* ]] || fail "$f: the run path names the build folder: $runpath"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy=$work/carried
mkdir -p "$copy/module" "$copy/tests"
cp "$build/culua" "$build/libculua_engine.so" "$copy/"
cp -P "$build"/libculua.so* "$copy/"
cp "$build/module/cu.so" "$copy/module/"
[[ -e $build/tests/culua_embed_tests ]] && cp "$build/tests/culua_embed_tests" "$copy/tests/"
"$copy/culua" --backend host -e 'assert(cu.ones(3):sum():item() == 3) print("carried culua: ok")'
# the libraries each binary resolves, from the copy
for f in culua libculua.so module/cu.so; do
  where=$(ldd "$copy/$f" | sed -n 's/.*libculua_engine\.so => \([^ ]*\).*/\1/p')
  where=$(realpath -m "$where")
  [[ $where == "$copy/libculua_engine.so" ]] || fail "$f finds the engine at '$where', not beside it in the copy"
done
if [[ -e $copy/tests/culua_embed_tests ]]; then
  where=$(ldd "$copy/tests/culua_embed_tests" | sed -n 's/.*libculua\.so\.[0-9]* => \([^ ]*\).*/\1/p')
  where=$(realpath -m "$where")
  [[ $where == "$copy/libculua.so."* ]] || fail "culua_embed_tests finds libculua at '$where'"
fi
echo "relocatable: ok"
