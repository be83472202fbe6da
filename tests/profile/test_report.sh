#!/bin/sh
# smelt report (docs/PROFILING.md): the page is self-contained and
# complete, a ResNet-50-sized graph stays small and paged, and in
# headless Chromium the page loads without console errors, draws every
# SVG, sorts its table on a click and links graph nodes to profile rows;
# a screenshot of each page goes to OUTDIR.
# usage: test_report.sh SMELT_BINARY REPO_ROOT OUTDIR
set -u
SMELT=$1
ROOT=$2
OUTDIR=$3
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
mkdir -p "$OUTDIR"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
CHECK="python3 $ROOT/tests/profile/check_report.py"

# report NAME MODEL ARGS...: writes $OUTDIR/NAME.html
report() {
    name=$1 model=$2
    shift 2
    if "$SMELT" report "$model" -o "$OUTDIR/$name.html" --runs 3 --warmup 1 -q \
        --peak-gflops 100 --peak-gbs 20 "$@" >"$T/out" 2>&1; then ok; else
        bad "smelt report $model"; sed 's/^/  | /' "$T/out"; return 1; fi
}

report digits "$ROOT/examples/digits_cnn.onnx" --dim batch=4 -j 2 &&
    { $CHECK page "$OUTDIR/digits.html" 1000000 && ok || bad "digits page"; }
grep -q "smelt check passed" "$OUTDIR/digits.html" && ok || bad "digits: check not quoted as passed"
report cnn_small "$ROOT/tests/graphs/cnn_small.ir" &&
    { $CHECK page "$OUTDIR/cnn_small.html" 1000000 && ok || bad "cnn_small page"; }
# ResNet-50's 175 nodes: paged, and small enough to open at once
python3 "$ROOT/tests/profile/gen_resnet50_ir.py" "$T/resnet50.ir"
report resnet50 "$T/resnet50.ir" &&
    { $CHECK page "$OUTDIR/resnet50.html" 3000000 && ok || bad "resnet50 page"; }

# bad arguments
"$SMELT" report "$ROOT/examples/mlp.ir" >"$T/out" 2>&1
[ $? -eq 2 ] && grep -q "no -o OUT.html given" "$T/out" && ok || bad "report without -o"
"$SMELT" report "$ROOT/examples/mlp.ir" -o "$T/no/dir/r.html" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "$T/no/dir/r.html" "$T/out" && ok || bad "report to an unwritable path"

# the browser: Debian's chromium (scripts/setup-deps.sh test installs it)
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
    echo "report: $pass passed, $fail failed"
    echo "SKIP: the browser checks: chromium is not installed and could not be (run scripts/setup-deps.sh test as root)"
    [ "$fail" -eq 0 ] || exit 1
    exit 77
fi
chrome() {
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu \
        --user-data-dir="$T/chrome" --no-first-run --hide-scrollbars "$@" 2>>"$T/chrome.log"
}
for name in digits cnn_small resnet50; do
    [ -f "$OUTDIR/$name.html" ] || continue
    # a copy with the error hook first in <head> and the probe at the end
    python3 - "$OUTDIR/$name.html" "$T/$name.probe.html" "$ROOT/tests/profile/browser_probe.js" <<'PY'
import sys
page, out, probe = sys.argv[1:4]
text = open(page, encoding="utf-8").read()
hook = ("<script>window.__errs=[];window.addEventListener('error',function(e)"
        "{window.__errs.push(String(e.message||(e.target&&(e.target.src||"
        "e.target.href))||'load error'))},true);var __ce=console.error;"
        "console.error=function(){window.__errs.push([].join.call(arguments,"
        "' '));__ce.apply(console,arguments)};</script>")
text = text.replace("<head>", "<head>" + hook, 1)
text = text.replace("</body>", "<script>" + open(probe).read() + "</script></body>", 1)
open(out, "w", encoding="utf-8").write(text)
PY
    if chrome --virtual-time-budget=10000 --dump-dom "file://$T/$name.probe.html" >"$T/$name.dom"; then
        $CHECK probe "$T/$name.dom" && ok || bad "$name in the browser"
    else
        bad "chromium could not load $name"; tail -5 "$T/chrome.log"
    fi
    chrome --window-size=1280,2400 --screenshot="$OUTDIR/$name.png" "file://$OUTDIR/$name.html" >/dev/null
    [ -s "$OUTDIR/$name.png" ] && ok || bad "no screenshot of $name"
done
echo "report: $pass passed, $fail failed (pages and screenshots in $OUTDIR)"
[ "$fail" -eq 0 ]
